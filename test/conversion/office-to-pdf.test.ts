import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { findSoffice } from '../../src/modules/conversion/conversion.service.ts';
import { CORPUS_SKIP, convert, corpus, failure, makeCfb, withWorkDir, writeTemp } from './conversion-documents.ts';

const soffice = await findSoffice();
const NO_OFFICE = soffice ? false : 'LibreOffice is not installed (apt-get install libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui)';


/** Running (a zombie waiting for this sandbox's init to reap it counts as dead). */
const isAlive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** A stand-in for soffice that never finishes: it records its pid and its child's, then waits. */
async function hangingSoffice(dir: string): Promise<{ script: string; pids: () => Promise<number[]> }> {
  const script = await writeTemp(dir, 'fake-soffice.sh', `#!/bin/sh\necho $$ > "${dir}/wrapper.pid"\nsleep 120 &\necho $! > "${dir}/child.pid"\nwait\n`);
  await chmod(script, 0o755);
  return {
    script,
    pids: async () => [Number(await readFile(path.join(dir, 'wrapper.pid'), 'utf8')), Number(await readFile(path.join(dir, 'child.pid'), 'utf8'))],
  };
}

async function waitUntilDead(pids: number[]): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!pids.some(isAlive)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** Makes an office document with LibreOffice itself (txt → docx, csv → xls), as a test input. */
async function makeWithSoffice(dir: string, source: string, content: string, target: string): Promise<string> {
  const input = await writeTemp(dir, source, content);
  const outDir = path.join(dir, 'made');
  await mkdir(outDir, { recursive: true });
  await promisify(execFile)(soffice!, [`-env:UserInstallation=${pathToFileURL(path.join(dir, 'profile')).href}`, '--headless', '--norestore', '--convert-to', target, '--outdir', outDir, input], { timeout: 120_000 });
  const made = (await readdir(outDir)).find((f) => f.endsWith(`.${target}`));
  assert.ok(made, `LibreOffice made no .${target}`);
  return path.join(outDir, made);
}

describe('office → PDF (LibreOffice process handling)', () => {
  it('names the Debian packages when LibreOffice cannot be started', async () => {
    await withWorkDir(async (dir) => {
      const doc = await writeTemp(dir, 'a.doc', makeCfb(['WordDocument']));
      const error = await failure(convert(doc, { sofficePath: path.join(dir, 'no-such-soffice') }));
      assert.equal(error.code, 'office_unavailable');
      assert.match(error.message, /libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui/);
    });
  });

  it('kills the whole process group on timeout', async () => {
    await withWorkDir(async (dir) => {
      const fake = await hangingSoffice(dir);
      const doc = await writeTemp(dir, 'a.doc', makeCfb(['WordDocument']));
      const error = await failure(convert(doc, { sofficePath: fake.script, officeTimeoutMs: 500 }));
      assert.equal(error.code, 'timeout');
      assert.match(error.message, /LibreOffice took longer than/);
      assert.ok(await waitUntilDead(await fake.pids()), 'soffice and its child must be gone');
    });
  });

  it('kills it on abort and rejects with code "aborted"', async () => {
    await withWorkDir(async (dir) => {
      const fake = await hangingSoffice(dir);
      const doc = await writeTemp(dir, 'a.doc', makeCfb(['WordDocument']));
      const controller = new AbortController();
      const pending = convert(doc, { sofficePath: fake.script, signal: controller.signal });
      // Abort once the fake has started (it writes its pid files first thing).
      for (let i = 0; i < 200; i++) {
        const started = await readFile(path.join(dir, 'child.pid'), 'utf8').then(() => true, () => false);
        if (started) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      controller.abort();
      assert.equal((await failure(pending)).code, 'aborted');
      assert.ok(await waitUntilDead(await fake.pids()), 'soffice and its child must be gone');
    });
  });
});

describe('office → PDF (real LibreOffice)', { skip: NO_OFFICE }, () => {
  it('converts a DOCX and an XLS made here, then renders them', async () => {
    await withWorkDir(async (dir) => {
      const docx = await makeWithSoffice(dir, 'letter.txt', 'Quarterly flipbook report\n\nThe conversion engine works.\n', 'docx');
      const fromDocx = await convert(docx, { widths: [320] });
      assert.equal(fromDocx.result.sourceFormat, 'docx');
      assert.equal(fromDocx.result.pageCount, 1);
      assert.ok(fromDocx.result.pdfPath?.endsWith('document.pdf'));
      assert.match(fromDocx.pages[0]!.text.map((t) => t.text).join(' '), /Quarterly flipbook report/);

      const xls = await makeWithSoffice(dir, 'sheet.csv', 'city,visitors\nLyon,1200\nGhent,800\n', 'xls');
      const fromXls = await convert(xls, { widths: [320] });
      assert.equal(fromXls.result.sourceFormat, 'xls');
      assert.match(fromXls.pages[0]!.text.map((t) => t.text).join(' '), /Ghent/);
    });
  });

  describe('fixtures', { skip: CORPUS_SKIP }, () => {
    it('themes.pptx: one page per slide', async () => {
      const { result } = await convert(corpus('themes.pptx'), { widths: [320] });
      assert.equal(result.sourceFormat, 'pptx');
      assert.equal(result.pageCount, 10);
    });

    it('SampleDoc.doc (Word 97) converts', async () => {
      const { result, pages } = await convert(corpus('SampleDoc.doc'), { widths: [320] });
      assert.equal(result.sourceFormat, 'doc');
      assert.ok(result.pageCount >= 1);
      assert.ok(pages[0]!.text.length > 0);
    });

    it('two spreadsheets in a row on the shared render threads (regression: reused canvases crashed Skia)', async () => {
      const first = await convert(corpus('45544.xlsx'));
      const second = await convert(corpus('57171_57163_57165.xlsx'));
      assert.equal(first.result.sourceFormat, 'xlsx');
      assert.ok(first.result.pageCount >= 7, `45544.xlsx: ${first.result.pageCount} pages`);
      assert.ok(second.result.pageCount >= 6, `57171_57163_57165.xlsx: ${second.result.pageCount} pages`);
      assert.deepEqual([...first.result.failedPages, ...second.result.failedPages], []);
    });

    it('truncated62886.docx fails with a readable message', async () => {
      const error = await failure(convert(corpus('truncated62886.docx')));
      assert.equal(error.code, 'office_failed');
      assert.match(error.message, /could not open this DOCX document/);
    });
  });
});
