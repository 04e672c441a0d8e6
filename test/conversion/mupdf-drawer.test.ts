/**
 * Pages drawn by mutool (issue 32), through the real service, on a machine
 * whose PATH has mutool, qpdf and prlimit but no poppler: what pdf.js cannot
 * draw (a font without a cmap table) is drawn in full without poppler and
 * without a warning, also for an encrypted PDF (qpdf decrypts a private copy
 * for mutool); a default-hidden layer stays hidden. The pdf.js path, where
 * mutool is absent, is covered by without-poppler.test.ts and the rest of
 * test/conversion.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { convertDocument, startService, type TestService } from '../helpers.ts';
import { compareInk } from './ink.ts';
import { FONT_SKIP, noCmapTablePdf, pdfFromObjects } from './unseen-documents.ts';

const run = promisify(execFile);
const which = (command: string) => {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
};
const TOOLS = { mutool: which('mutool'), qpdf: which('qpdf'), prlimit: which('prlimit'), pdftoppm: which('pdftoppm') };
const SKIP = FONT_SKIP || (!TOOLS.mutool && 'mutool is not installed (Debian: mupdf-tools)') || (!TOOLS.qpdf && 'qpdf is not installed') || (!TOOLS.pdftoppm && 'pdftoppm is needed for the reference');

/** A box drawn always, and one inside a layer that is off by default. */
function hiddenLayerPdf(): Buffer {
  const content = Buffer.from('0 0 0 rg 20 20 100 100 re f /OC /L1 BDC 0 0 0 rg 250 20 100 100 re f EMC', 'latin1');
  return pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R /OCProperties << /OCGs [5 0 R] /D << /Order [5 0 R] /OFF [5 0 R] >> >> >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 300] /Contents 4 0 R /Resources << /Properties << /L1 5 0 R >> >> >>',
    { dict: '<< >>', data: content },
    '<< /Type /OCG /Name (Answers) >>',
  ]);
}

describe('pages drawn by mutool', { skip: SKIP }, () => {
  let svc: TestService;
  let key: string;
  let bin: string;
  const originalPath = process.env.PATH;
  before(async () => {
    // Renderers are forked with this environment: mutool, qpdf and prlimit are found, pdftoppm is not.
    bin = await mkdtemp(path.join(os.tmpdir(), 'flipbook-mutool-only-'));
    for (const tool of ['mutool', 'qpdf', 'prlimit'] as const) if (TOOLS[tool]) await symlink(TOOLS[tool]!, path.join(bin, tool));
    process.env.PATH = bin;
    svc = await startService({ env: { PAGE_WIDTHS: '320,1024' } });
    key = (await svc.workspace()).key;
  });
  after(async () => {
    await svc.stop();
    process.env.PATH = originalPath;
    await rm(bin, { recursive: true, force: true });
  });

  const pages = async (book: string) => (await svc.request('GET', `/v1/books/${book}/pages`, { key })).body.data;
  const image1024 = async (page: { images: { width: number; url: string }[] }) => Buffer.from(await (await fetch(page.images.find((i) => i.width === 1024)!.url)).arrayBuffer());

  /** Every page as pdftoppm draws it, no inked region losing half its ink. */
  async function assertFullInk(book: string, pdf: Buffer): Promise<void> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-mutool-ink-'));
    try {
      const source = path.join(dir, 'doc.pdf');
      await writeFile(source, pdf);
      for (const page of await pages(book)) {
        const ours = await image1024(page);
        const { width = 0, height = 0 } = await sharp(ours).metadata();
        const root = path.join(dir, `ref-${page.number}`);
        await run(TOOLS.pdftoppm!, ['-f', String(page.number), '-l', String(page.number), '-scale-to-x', String(width), '-scale-to-y', String(height), '-png', '-singlefile', source, root]);
        const ink = await compareInk(ours, await readFile(`${root}.png`));
        assert.ok(ink.inked > 20 && ink.lost === 0 && ink.ratio > 0.9, `page ${page.number}: ${JSON.stringify(ink)}`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('draws text in a font without a cmap table in full, without poppler and without a warning', async () => {
    const pdf = noCmapTablePdf();
    const { batch, book } = await convertDocument(svc, key, pdf, 'report.pdf');
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.deepEqual(batch.warnings, []);
    for (const page of await pages(book)) assert.deepEqual(page.warnings, []);
    await assertFullInk(book, pdf);
  });

  it('draws an encrypted PDF from a copy qpdf decrypts (the password on no command line)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-mutool-locked-'));
    try {
      const plain = path.join(dir, 'plain.pdf');
      const locked = path.join(dir, 'locked.pdf');
      await writeFile(plain, noCmapTablePdf());
      await run(TOOLS.qpdf!, ['--encrypt', 'report-pass', 'owner-pass', '256', '--', plain, locked]);
      const { batch, book } = await convertDocument(svc, key, await readFile(locked), 'locked.pdf', { status: 'publish', password: 'report-pass' });
      assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
      // pdf.js would have warned font_not_drawn (no poppler here): mutool drew these pages.
      assert.deepEqual(batch.warnings, []);
      await assertFullInk(book, await readFile(plain));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps a layer that is off by default hidden', async () => {
    const { batch, book } = await convertDocument(svc, key, hiddenLayerPdf(), 'layers.pdf');
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    const [page] = await pages(book);
    const { data, info } = await sharp(await image1024(page)).greyscale().raw().toBuffer({ resolveWithObject: true });
    // Page 400 x 300 pt: the visible box is centred at (70, 230) pt from the top left, the hidden one at (300, 230).
    const at = (xPt: number, yPt: number) => data[Math.floor((yPt / 300) * info.height) * info.width + Math.floor((xPt / 400) * info.width)]!;
    assert.ok(at(70, 230) < 40, `the visible box is drawn (${at(70, 230)})`);
    assert.ok(at(300, 230) > 230, `the hidden layer is not drawn (${at(300, 230)})`);
  });
});
