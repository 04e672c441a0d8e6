import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { ConversionError, type PageLink, type RenderedPage } from '../../src/modules/conversion/conversion.service.ts';
import { A4, CORPUS_SKIP, convert, corpus, makePdf, rawPdf, withWorkDir, writeTemp } from './conversion-documents.ts';

const near = (actual: number, expected: number, tolerance: number, label: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${label}: ${actual} is not within ${tolerance} of ${expected}`);

const pageText = (page: RenderedPage) => page.text.map((t) => t.text).join(' ');

async function convertPdf(bytes: Uint8Array, options: Parameters<typeof convert>[1] = {}, inspect?: Parameters<typeof convert>[2]) {
  return withWorkDir(async (dir) => convert(await writeTemp(dir, 'input.pdf', bytes), options, inspect));
}

async function rejection(promise: Promise<unknown>): Promise<ConversionError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConversionError, `expected a ConversionError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the conversion to fail');
}

describe('PDF conversion (generated documents)', () => {
  it('renders every page at the three default widths, in order, with text positions and page sizes', async () => {
    const pdf = await makePdf({
      title: 'Generated for tests',
      pages: [{ lines: ['Hello conversion engine', 'Second line of page one'] }, {}, {}, {}, {}],
    });
    const seen: number[] = [];
    const { result, pages, startedWith } = await convertPdf(pdf, {}, async (page) => {
      seen.push(page.number);
      for (const image of page.images) {
        const meta = await sharp(image.path).metadata();
        assert.equal(meta.format, 'webp');
        assert.equal(meta.width, image.width);
        assert.equal(meta.height, image.height);
        assert.equal((await stat(image.path)).size, image.bytes);
      }
    });
    assert.deepEqual(seen, [1, 2, 3, 4, 5]);
    assert.deepEqual(startedWith, { pageCount: 5, beforeFirstPage: true });
    assert.equal(result.pageCount, 5);
    assert.equal(result.title, 'Generated for tests');
    assert.equal(result.sourceFormat, 'pdf');
    assert.equal(result.pdfPath, null);
    assert.deepEqual(result.failedPages, []);

    const first = pages[0]!;
    near(first.widthPt, A4[0], 0.01, 'width');
    near(first.heightPt, A4[1], 0.01, 'height');
    assert.deepEqual(first.images.map((i) => [i.requestedWidth, i.width, i.height]), [
      [320, 320, Math.round((320 * A4[1]) / A4[0])],
      [1024, 1024, Math.round((1024 * A4[1]) / A4[0])],
      [2048, 2048, Math.round((2048 * A4[1]) / A4[0])],
    ]);
    const hello = first.text.find((t) => t.text.includes('Hello conversion engine'));
    assert.ok(hello, `page 1 text: ${pageText(first)}`);
    // Drawn at x = 72 pt, baseline 100 pt from the top, 16 pt Helvetica.
    near(hello.x, 72 / A4[0], 0.005, 'x');
    near(hello.y + hello.height, (100 + 16 * 0.23) / A4[1], 0.01, 'bottom');
    near(hello.height, 16 / A4[1], 0.01, 'height');
    assert.match(pageText(pages[3]!), /Page 4 of 5/);
  });

  it('keeps the pixels: the text is drawn dark on white where the text item says', async () => {
    const pdf = await makePdf({ pages: [{ lines: ['MMMMMMMMMMMMMMMMMMMM'] }] });
    await convertPdf(pdf, { widths: [600] }, async (page) => {
      const image = page.images[0]!;
      const item = page.text[0]!;
      const { data, info } = await sharp(image.path).greyscale().raw().toBuffer({ resolveWithObject: true });
      const at = (fx: number, fy: number) => data[Math.floor(fy * info.height) * info.width + Math.floor(fx * info.width)]!;
      assert.ok(at(0.95, 0.95) > 240, 'page corner is white');
      let darkest = 255;
      for (let fx = item.x; fx < item.x + item.width; fx += 0.002) darkest = Math.min(darkest, at(fx, item.y + item.height * 0.5));
      assert.ok(darkest < 100, `text line should contain dark pixels, darkest ${darkest}`);
    });
  });

  it('resolves link annotations (URI, explicit and named destinations) and the outline to pages', async () => {
    const pdf = await makePdf({ pages: [{}, {}, {}], links: true, outline: true });
    const { result, pages } = await convertPdf(pdf);
    const links = pages[0]!.links;
    const byTarget = (predicate: (l: PageLink) => boolean) => links.find(predicate);
    const uri = byTarget((l) => l.url === 'https://example.com/annotated');
    assert.ok(uri, JSON.stringify(links));
    assert.equal(uri.source, 'annotation');
    // Rect [72, 400, 272, 430] in PDF space (origin bottom-left).
    near(uri.x, 72 / A4[0], 0.001, 'x');
    near(uri.y, (A4[1] - 430) / A4[1], 0.001, 'y');
    near(uri.width, 200 / A4[0], 0.001, 'width');
    near(uri.height, 30 / A4[1], 0.001, 'height');
    assert.ok(byTarget((l) => l.page === 2), 'explicit destination → page 2');
    assert.ok(byTarget((l) => l.page === 3), 'named destination → page 3');
    assert.equal(links.length, 3);

    assert.deepEqual(result.outline, [
      { title: 'Start', page: 1, children: [{ title: 'Detail', page: 2, children: [] }] },
      { title: 'End', page: 3, children: [] },
    ]);
  });

  it('applies /Rotate and keeps mixed page sizes (sizes in points after rotation)', async () => {
    const pdf = await makePdf({ pages: [{ size: [612, 792] }, { size: [612, 792], rotate: 90 }, { size: [1000, 500] }, { size: [200, 200], rotate: 270 }] });
    const { pages } = await convertPdf(pdf, { widths: [400] });
    assert.deepEqual(pages.map((p) => [p.widthPt, p.heightPt]), [[612, 792], [792, 612], [1000, 500], [200, 200]]);
    assert.deepEqual(pages.map((p) => [p.images[0]!.width, p.images[0]!.height]), [[400, 518], [400, 309], [400, 200], [400, 400]]);
    // On the rotated page the text runs top to bottom: its box is taller than wide.
    const rotated = pages[1]!.text[0]!;
    assert.ok(rotated.height > rotated.width, JSON.stringify(rotated));
  });

  it('detects web and e-mail addresses in the text when autoLinks is on, and only then', async () => {
    const pdf = await makePdf({ pages: [{ lines: ['Read more at www.flipbook.example/docs or https://example.org/a?b=1.', 'Questions: team@flipbook.example'] }] });
    const off = await convertPdf(pdf);
    assert.deepEqual(off.pages[0]!.links, []);
    const on = await convertPdf(pdf, { autoLinks: true });
    const links = on.pages[0]!.links;
    assert.deepEqual(links.map((l) => l.url).sort(), ['https://example.org/a?b=1', 'https://www.flipbook.example/docs', 'mailto:team@flipbook.example']);
    assert.ok(links.every((l) => l.source === 'text' && l.width > 0 && l.height > 0));
  });

  it('scales absurdly large pages down to the pixel budget instead of allocating them', async () => {
    // 14,400 pt is the largest page PDF allows: 200 inches. A 1:50 strip would be 2048 x 102,400 px.
    const pdf = await makePdf({ pages: [{ size: [288, 14_400] }] });
    const { pages } = await convertPdf(pdf, { maxPagePixels: 4_000_000 });
    const largest = pages[0]!.images[2]!;
    assert.ok(largest.width * largest.height <= 4_000_000 * 1.01, `${largest.width}x${largest.height}`);
    assert.ok(largest.height <= 16_383);
    near(largest.height / largest.width, 50, 0.5, 'aspect ratio kept');
  });

  it('encodes JPEG when asked', async () => {
    const { pages } = await convertPdf(await makePdf({ pages: [{}] }), { format: 'jpeg', widths: [300] }, async (page) => {
      assert.equal((await sharp(page.images[0]!.path).metadata()).format, 'jpeg');
    });
    assert.equal(pages[0]!.images[0]!.format, 'jpeg');
  });

  it('holds rendering back while onPage is slow (bounded look-ahead)', async () => {
    const pdf = await makePdf({ pages: Array.from({ length: 24 }, () => ({})) });
    let maxAhead = 0;
    await convertPdf(pdf, { concurrency: 2, widths: [200] }, async (page, workDir) => {
      const files = await readdir(`${workDir}/pages`);
      const highest = Math.max(...files.map((f) => Number(/page-(\d+)/.exec(f)?.[1] ?? 0)));
      maxAhead = Math.max(maxAhead, highest - page.number);
      await new Promise((resolve) => setTimeout(resolve, 40));
    });
    // 2 workers x 3 pages of look-ahead (see pdf-render.ts).
    assert.ok(maxAhead <= 6, `rendered ${maxAhead} pages ahead of the consumer`);
  });

  it('stops promptly on abort and rejects with code "aborted"', async () => {
    const pdf = await makePdf({ pages: Array.from({ length: 60 }, () => ({})) });
    const controller = new AbortController();
    let delivered = 0;
    const error = await rejection(
      convertPdf(pdf, { signal: controller.signal }, async () => {
        delivered++;
        if (delivered === 2) controller.abort(new Error('user cancelled'));
      }),
    );
    assert.equal(error.code, 'aborted');
    assert.ok(delivered <= 3, `${delivered} pages delivered after abort`);
  });

  it('settles an aborted conversion only after the page being stored is stored (a cleanup then is not overtaken)', async () => {
    const pdf = await makePdf({ pages: Array.from({ length: 20 }, () => ({})) });
    const controller = new AbortController();
    let storing = false;
    let storedAfterAbort = false;
    const error = await rejection(
      convertPdf(pdf, { signal: controller.signal }, async (page) => {
        if (page.number !== 2) return;
        storing = true;
        controller.abort(new Error('user cancelled')); // the abort arrives while this page is being stored
        await new Promise((resolve) => setTimeout(resolve, 300));
        storedAfterAbort = true;
        storing = false;
      }),
    );
    assert.equal(error.code, 'aborted');
    assert.equal(storing, false, 'the conversion settled while onPage was still storing a page');
    assert.equal(storedAfterAbort, true);
  });

  it('fails with render_failed when no page renders in time (page timeout path)', async () => {
    const pdf = await makePdf({ pages: [{}, {}] });
    const error = await rejection(convertPdf(pdf, { pageTimeoutMs: 1 }));
    assert.equal(error.code, 'render_failed');
  });

  it('reports damaged, empty and page-less PDFs with a readable error', async () => {
    const garbage = await rejection(convertPdf(Buffer.from('%PDF-1.7\n\u0000\u0001 not really a PDF after its header', 'latin1')));
    assert.equal(garbage.code, 'invalid_document');
    assert.match(garbage.message, /damaged/);

    const empty = await rejection(convertPdf(new Uint8Array(0)));
    assert.equal(empty.code, 'empty_file');

    // /Pages points to a JavaScript action (like pdf.js issue15590.pdf).
    const pageless = rawPdf(['<< /Type /Catalog /Pages 2 0 R /OpenAction 2 0 R >>', '<< /S /JavaScript /JS (app.alert(1)) >>']);
    const noPages = await rejection(convertPdf(pageless));
    assert.equal(noPages.code, 'no_pages');
  });

  it('delivers a page that cannot be read as a blank page with an error, and the rest normally', async () => {
    // Kids: a real page, then a Pages node in a cycle (like pdf.js Pages-tree-refs.pdf).
    const pdf = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 400 300] >>',
      '<< /Type /Page /Parent 2 0 R /Contents 6 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>',
      '<< /Type /Pages /Kids [5 0 R] /Count 1 >>',
      '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
      '<< /Length 44 >>\nstream\nBT /F1 24 Tf 40 200 Td (Survivor page) Tj ET\nendstream',
    ]);
    const { result, pages } = await convertPdf(pdf, { widths: [400] });
    assert.equal(result.pageCount, 2);
    assert.deepEqual(result.failedPages, [2]);
    assert.match(pageText(pages[0]!), /Survivor page/);
    assert.equal(pages[0]!.error, undefined);
    assert.match(pages[1]!.error ?? '', /could not be rendered/);
    assert.deepEqual([pages[1]!.images[0]!.width, pages[1]!.images[0]!.height], [400, 300]);
  });

  it('survives truncated PDFs: renders what can be recovered or fails with a ConversionError', async () => {
    const pdf = await makePdf({ pages: Array.from({ length: 6 }, (_, i) => ({ lines: [`Truncation test page ${i + 1}`] })) });
    for (const fraction of [0.3, 0.6, 0.9]) {
      try {
        const { result, pages } = await convertPdf(pdf.subarray(0, Math.floor(pdf.length * fraction)), { widths: [200] });
        assert.ok(result.pageCount >= 1);
        assert.equal(pages.length, result.pageCount);
      } catch (error) {
        assert.ok(error instanceof ConversionError, `truncated at ${fraction}: ${String(error)}`);
      }
    }
  });
});

describe('PDF conversion (real-world fixtures)', { skip: CORPUS_SKIP }, () => {
  it('tracemonkey.pdf: 14 pages, the title words on page 1', async () => {
    const { result, pages } = await convert(corpus('tracemonkey.pdf'), { widths: [320] });
    assert.equal(result.pageCount, 14);
    assert.equal(pages.length, 14);
    assert.match(pageText(pages[0]!), /Trace-based Just-in-Time Type Specialization/);
    assert.deepEqual(result.failedPages, []);
  });

  it('pdflatex-outline.pdf: 9 outline entries and 9 internal links resolved to pages', async () => {
    const { result, pages } = await convert(corpus('pdflatex-outline.pdf'), { widths: [320] });
    const flat = (entries: typeof result.outline): typeof result.outline => entries.flatMap((e) => [e, ...flat(e.children)]);
    assert.equal(flat(result.outline).length, 9);
    assert.equal(result.outline[0]!.title, 'Foo');
    assert.ok(flat(result.outline).every((e) => e.page !== null && e.page >= 1 && e.page <= 4));
    const links = pages.flatMap((p) => p.links);
    assert.equal(links.length, 9);
    assert.ok(links.every((l) => l.page !== undefined && l.page >= 1 && l.page <= 4), JSON.stringify(links));
  });

  it('rotation.pdf and sizes.pdf: page sizes after rotation, mixed sizes', async () => {
    const rotation = await convert(corpus('rotation.pdf'), { widths: [320] });
    assert.deepEqual(rotation.pages.map((p) => [p.widthPt, p.heightPt]), [[612, 792], [792, 612]]);
    assert.deepEqual(rotation.pages.map((p) => p.images[0]!.height), [414, 247]);
    const sizes = await convert(corpus('sizes.pdf'), { widths: [320] });
    assert.deepEqual(sizes.pages.map((p) => [p.widthPt, p.heightPt]), [[612, 792], [649, 323], [792, 612]]);
  });

  it('encrypted PDFs: password required, password incorrect, right password, owner-only protection', async () => {
    const file = corpus('libreoffice-writer-password.pdf');
    assert.equal((await rejection(convert(file))).code, 'password_required');
    assert.equal((await rejection(convert(file, { password: 'wrong' }))).code, 'password_incorrect');
    assert.equal((await convert(file, { password: 'openpassword', widths: [320] })).result.pageCount, 1);
    assert.equal((await convert(corpus('issue6010_1.pdf'), { password: 'abc', widths: [320] })).result.pageCount, 1);
    assert.equal((await convert(corpus('empty_protected.pdf'), { widths: [320] })).result.pageCount, 1);
  });

  it('CJK text with predefined CMaps (issue6387.pdf) is extracted', async () => {
    const { pages } = await convert(corpus('issue6387.pdf'), { widths: [320] });
    assert.match(pageText(pages[0]!), /[\u3040-\u30ff\u4e00-\u9fff]/);
  });

  it('broken but repairable PDFs render; unrecoverable ones fail with a readable error', async () => {
    for (const name of ['scan-bad.pdf', 'helloworld-bad.pdf']) {
      const { result } = await convert(corpus(name), { widths: [320] });
      assert.equal(result.pageCount, 1, name);
      assert.deepEqual(result.failedPages, [], name);
    }
    const hello = await convert(corpus('helloworld-bad.pdf'), { widths: [320] });
    assert.match(pageText(hello.pages[0]!), /Hello, world!/);
    const loop = await convert(corpus('Pages-tree-refs.pdf'), { widths: [320] });
    assert.equal(loop.result.pageCount, 2);
    assert.deepEqual(loop.result.failedPages, [2]);

    const garbage = await rejection(convert(corpus('bug1020226.pdf')));
    assert.equal(garbage.code, 'invalid_document');
    const noPages = await rejection(convert(corpus('issue15590.pdf')));
    assert.equal(noPages.code, 'no_pages');
  });

  it('a JPEG named .pdf becomes an image page, not a PDF error', async () => {
    const { result } = await convert(corpus('not-a-pdf-jpeg-bytes.pdf'), { widths: [320] });
    assert.equal(result.sourceFormat, 'jpeg');
    assert.equal(result.pageCount, 1);
  });
});
