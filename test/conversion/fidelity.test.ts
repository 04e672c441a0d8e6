/**
 * Fidelity on real-world shapes of documents (issue 15), through the real
 * service: upload, conversion job, API and reader. Each document is made here
 * (pdf-lib) or is a small fixture under test/fixtures/conversion made for
 * these tests (see its README).
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { PDFDocument, PDFHexString, PDFName, PDFNull, PDFString, StandardFonts, degrees, type PDFRef } from 'pdf-lib';
import sharp from 'sharp';
import { convertDocument, startService, uploadFile, type TestService } from '../helpers.ts';
import { makeCfb, rawPdf } from './conversion-documents.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/conversion');
const hasQpdf = (() => {
  try {
    execFileSync('qpdf', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

type Rect = [number, number, number, number];
/** C0 and C1 controls but tab and newline. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('conversion fidelity (issue 15)', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService({ env: { PAGE_WIDTHS: '320,1024' } });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  const upload = (bytes: Uint8Array, filename: string, fields?: Record<string, string>) => convertDocument(svc, key, bytes, filename, fields);
  const pages = async (book: string) => (await svc.request('GET', `/v1/books/${book}/pages`, { key })).body.data;
  const search = async (book: string, q: string) => (await svc.request('GET', `/read/${book}/search`, { query: { q } })).body;

  it('draws a page whose artwork is a 100-megapixel CCITT fax image (no blank page, no warning)', async () => {
    const { batch, book } = await upload(await readFile(path.join(FIXTURES, 'huge-ccitt-page.pdf')), 'fax.pdf');
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.deepEqual(batch.warnings, []);
    const [page] = await pages(book);
    assert.deepEqual(page.warnings, []);
    const image = Buffer.from(await (await fetch(page.images[1].url)).arrayBuffer());
    const { data, info } = await sharp(image).greyscale().raw().toBuffer({ resolveWithObject: true });
    // The image is a frame and a filled disc in the middle: black there, white at the corner.
    const at = (fx: number, fy: number) => data[Math.floor(fy * info.height) * info.width + Math.floor(fx * info.width)]!;
    assert.ok(at(0.5, 0.5) < 60, `centre of the disc is black, got ${at(0.5, 0.5)}`);
    assert.ok(at(0.02, 0.02) > 200, 'the page corner is white');
  });

  it('draws that page of an encrypted PDF too, the password never on a command line (qpdf decrypts for pdftoppm)', { skip: !hasQpdf && 'qpdf is not installed' }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-fax-'));
    try {
      const encrypted = path.join(dir, 'fax-locked.pdf');
      await promisify(execFile)('qpdf', ['--encrypt', 'fax-pass', 'owner-pass', '256', '--', path.join(FIXTURES, 'huge-ccitt-page.pdf'), encrypted]);
      const { batch, book } = await upload(await readFile(encrypted), 'fax-locked.pdf', { status: 'publish', password: 'fax-pass' });
      assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
      assert.deepEqual(batch.warnings, []);
      const [page] = await pages(book);
      const image = Buffer.from(await (await fetch(page.images[1].url)).arrayBuffer());
      const { data, info } = await sharp(image).greyscale().raw().toBuffer({ resolveWithObject: true });
      assert.ok(data[Math.floor(0.5 * info.height) * info.width + Math.floor(0.5 * info.width)]! < 60, 'the disc is drawn');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps a page whose image cannot be decoded, with a warning on the page and the batch', async () => {
    const pdf = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 300] /Contents 4 0 R /Resources << /XObject << /Im0 5 0 R >> /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>',
      '<< /Length 70 >>\nstream\nq 200 0 0 100 20 20 cm /Im0 Do Q BT /F1 20 Tf 20 250 Td (Caption kept) Tj ET\nendstream',
      '<< /Type /XObject /Subtype /Image /Width 64 /Height 64 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length 32 >>\nstream\n\u00ff\u00d8\u00ff\u00e0 this is not a JPEG at all....\nendstream',
    ]);
    const { batch, book } = await upload(pdf, 'damaged-image.pdf');
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.deepEqual(batch.warnings.map((w: { code: string; page: number }) => [w.code, w.page]), [['image_damaged', 1]]);
    assert.match(batch.warnings[0].message, /damaged/);
    const [page] = await pages(book);
    assert.equal(page.warnings[0].code, 'image_damaged');
    assert.ok(page.text.some((t: { text: string }) => t.text === 'Caption kept'));
  });

  it('stores Arabic and Hebrew lines in logical order: search, text view and page text find real words', async () => {
    // LibreOffice's PDF of test/fixtures/conversion/rtl-lines.txt: it paints some right-to-left runs left to right.
    const { batch, book } = await upload(await readFile(path.join(FIXTURES, 'rtl-lines.pdf')), 'rtl.pdf');
    assert.equal(batch.status, 'completed');
    const text = (await svc.request('GET', `/read/${book}/text`, { query: { from: 1, to: 1 } })).body.pages[0].text as string;
    assert.match(text, /مرحبا بالعالم هذا كتاب جميل/);
    assert.match(text, /שלום עולם זה ספר יפה מאוד/);
    assert.match(text, /قرأت كتاب Flipbook في 2026 مع أصدقائي/);
    assert.match(text, /English text with one عربي word inside/);
    for (const phrase of ['مرحبا بالعالم', 'ספר יפה', 'Flipbook في 2026']) {
      const found = await search(book, phrase);
      assert.equal(found.total, 1, `search for ${phrase}: ${JSON.stringify(found)}`);
    }
    const [page] = await pages(book);
    const hello = page.text.find((t: { text: string }) => t.text === 'مرحبا');
    assert.equal(hello?.dir, 'rtl');
    const html = await (await fetch(`${svc.url}/read/${book}`)).text();
    assert.match(html, /مرحبا بالعالم هذا كتاب جميل/);
  });

  it('places search highlights on the displayed page for /Rotate 0, 90, 180 and 270', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Courier);
    for (const rotation of [0, 90, 180, 270]) {
      const page = doc.addPage([600, 800]);
      // Courier: every character 0.6 em wide, so the word's place in the run is exact.
      page.drawText('alpha needle omega', { x: 100, y: 600, size: 20, font });
      page.setRotation(degrees(rotation));
    }
    const { book } = await upload(await doc.save(), 'rotated.pdf');
    const found = await search(book, 'needle');
    assert.equal(found.total, 4);
    const rects = found.hits.map((hit: { page: number; rects: Rect[] }) => {
      assert.equal(hit.rects.length, 1, `page ${hit.page}`);
      return hit.rects[0]!;
    });
    // Unrotated: the word starts 6 characters (72 pt) in, is 6 characters (72 pt) long.
    const [x, y, w, h] = rects[0]!;
    assert.ok(Math.abs(x - (100 + 72) / 600) < 0.005 && Math.abs(w - 72 / 600) < 0.005, `rotation 0: ${rects[0]}`);
    // The same box turned clockwise with the page (fractions of the displayed page).
    const expected: Record<number, Rect> = {
      90: [1 - y - h, x, h, w],
      180: [1 - x - w, 1 - y - h, w, h],
      270: [y, 1 - x - w, h, w],
    };
    [90, 180, 270].forEach((rotation, i) => {
      const actual = rects[i + 1]!;
      expected[rotation]!.forEach((value, j) => assert.ok(Math.abs(actual[j]! - value) < 0.01, `rotation ${rotation}: ${actual} vs ${expected[rotation]}`));
    });
  });

  it('accepts a PDF whose %PDF- header is missing, and refuses bytes that only look like one', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([300, 300]).drawText('Headerless but fine', { x: 20, y: 150, size: 18, font: await doc.embedFont(StandardFonts.Helvetica) });
    const bytes = Buffer.from(await doc.save({ useObjectStreams: false }));
    const withoutHeader = bytes.subarray(bytes.indexOf('\n', bytes.indexOf('%PDF-')) + 1);
    assert.equal(withoutHeader.indexOf('%PDF-'), -1);
    const { batch, book } = await upload(withoutHeader, 'no-header.pdf');
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.equal(batch.source_format, 'pdf');
    assert.ok((await pages(book))[0].text.some((t: { text: string }) => t.text === 'Headerless but fine'));

    const prose = await uploadFile(svc, key, Buffer.from('Meeting notes: see item 4 0 obj and more.\nNothing else.'), 'notes.pdf');
    assert.equal(prose.status, 422);
  });

  it('exposes the outline through the API, web addresses kept as external links', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const first = doc.addPage([300, 300]);
    const second = doc.addPage([300, 300]);
    first.drawText('One', { x: 20, y: 150, size: 18, font });
    second.drawText('Two', { x: 20, y: 150, size: 18, font });
    const ctx = doc.context;
    const [root, a, b, c, d] = [ctx.nextRef(), ctx.nextRef(), ctx.nextRef(), ctx.nextRef(), ctx.nextRef()] as PDFRef[];
    ctx.assign(a!, ctx.obj({ Title: PDFHexString.fromText('Chapter 2'), Parent: root!, Next: b!, Dest: [second.ref, PDFName.of('XYZ'), PDFNull, PDFNull, PDFNull] }));
    ctx.assign(b!, ctx.obj({ Title: PDFHexString.fromText('Our site'), Parent: root!, Prev: a!, Next: c!, A: { S: 'URI', URI: PDFString.of('https://example.com/docs') } }));
    ctx.assign(c!, ctx.obj({ Title: PDFHexString.fromText('Shop'), Parent: root!, Prev: b!, Next: d!, A: { S: 'URI', URI: PDFString.of('shop.example.org/spring') } }));
    ctx.assign(d!, ctx.obj({ Title: PDFHexString.fromText('Contact\u0003'), Parent: root!, Prev: c!, A: { S: 'URI', URI: PDFString.of('mailto:team@example.com') } }));
    ctx.assign(root!, ctx.obj({ Type: 'Outlines', First: a!, Last: d!, Count: 4 }));
    doc.catalog.set(PDFName.of('Outlines'), root!);
    const { book } = await upload(await doc.save(), 'outline.pdf');
    const outline = await svc.request('GET', `/v1/books/${book}/outline`, { key });
    assert.equal(outline.status, 200);
    assert.deepEqual(outline.body.data, [
      { title: 'Chapter 2', page: 2, children: [] },
      { title: 'Our site', page: null, url: 'https://example.com/docs', children: [] },
      { title: 'Shop', page: null, url: 'https://shop.example.org/spring', children: [] },
      { title: 'Contact', page: null, url: 'mailto:team@example.com', children: [] },
    ]);
    const other = await svc.workspace();
    assert.equal((await svc.request('GET', `/v1/books/${book}/outline`, { key: other.key })).status, 404);
  });

  it('strips control characters from extracted text (snippets and the text endpoint), keeping the words', async () => {
    // A hidden text layer in a Type0 font whose ToUnicode map gives U+0003 (pdf.js passes it, and NULs, through).
    const cmap = [
      '/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Ctl def',
      '1 begincodespacerange <0000> <FFFF> endcodespacerange',
      '1 beginbfrange <0041> <007A> <0041> endbfrange',
      '1 beginbfchar <0001> <0003> endbfchar',
      'endcmap CMapName currentdict /CMap defineresource pop end end',
    ].join('\n');
    const pdf = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 300] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
      '<< /Length 62 >>\nstream\nBT /F1 20 Tf 20 150 Td <00480069006400010064006500 6E> Tj ET\nendstream',
      '<< /Type /Font /Subtype /Type0 /BaseFont /Helvetica /Encoding /Identity-H /DescendantFonts [7 0 R] /ToUnicode 6 0 R >>',
      `<< /Length ${cmap.length} >>\nstream\n${cmap}\nendstream`,
      '<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Helvetica /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 500 >>',
    ]);
    const { book } = await upload(pdf, 'controls.pdf');
    const [page] = await pages(book);
    const all = page.text.map((t: { text: string }) => t.text).join('');
    assert.doesNotMatch(all, CONTROLS);
    assert.match(all, /Hidden/i);
    const text = (await svc.request('GET', `/read/${book}/text`, { query: { from: 1, to: 1 } })).body.pages[0].text as string;
    assert.doesNotMatch(text, CONTROLS);
    const found = await search(book, 'hidden');
    assert.equal(found.total, 1);
    assert.doesNotMatch(JSON.stringify(found.hits[0]), /\\u000[0-8]|\\u00(1|7|8|9)/);
  });

  it('says once what is wrong and what to do when a file is refused', async () => {
    const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).gif().toBuffer();
    const refused = await uploadFile(svc, key, gif, 'picture.pdf');
    assert.equal(refused.status, 422);
    const message = refused.body.error.details.files[0] as string;
    assert.match(message, /GIF/);
    assert.equal(message.split('DOCX').length - 1, 1, `the accepted formats are listed once: ${message}`);

    const locked = await uploadFile(svc, key, makeCfb(['EncryptionInfo', 'EncryptedPackage']), 'Annual report.docx');
    assert.equal(locked.status, 422);
    assert.deepEqual(locked.body.error.details.files, ['This Word document is password-protected. Remove the password in Word and upload it again.']);
  });
});
