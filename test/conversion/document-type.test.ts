import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { ACCEPTED_FORMATS, detectDocumentType } from '../../src/modules/conversion/conversion.service.ts';
import { sniffDocument } from '../../src/modules/conversion/document-type.ts';
import { CORPUS_SKIP, corpus, makeCfb, makePdf, withWorkDir, writeTemp } from './conversion-documents.ts';

describe('detectDocumentType', () => {
  it('reads PDFs, JPEGs and PNGs from their bytes, whatever the file is called', async () => {
    await withWorkDir(async (dir) => {
      const pdf = await writeTemp(dir, 'photo.jpg', await makePdf({ pages: [{}] }));
      const jpeg = await writeTemp(dir, 'report.pdf', await sharp({ create: { width: 8, height: 8, channels: 3, background: 'red' } }).jpeg().toBuffer());
      const png = await writeTemp(dir, 'noextension', await sharp({ create: { width: 8, height: 8, channels: 4, background: 'blue' } }).png().toBuffer());
      assert.deepEqual(await detectDocumentType(pdf), { kind: 'pdf', format: 'pdf', mime: 'application/pdf' });
      assert.deepEqual(await detectDocumentType(jpeg), { kind: 'image', format: 'jpeg', mime: 'image/jpeg' });
      assert.deepEqual(await detectDocumentType(png), { kind: 'image', format: 'png', mime: 'image/png' });
    });
  });

  it('accepts a PDF with junk before the %PDF- header, as readers do', async () => {
    await withWorkDir(async (dir) => {
      const pdf = Buffer.concat([Buffer.from('garbage from a mail gateway\r\n'), await makePdf({ pages: [{}] })]);
      assert.equal((await detectDocumentType(await writeTemp(dir, 'x.bin', pdf)))?.format, 'pdf');
    });
  });

  it('tells .doc, .xls and .ppt apart by the main stream of the compound file', async () => {
    await withWorkDir(async (dir) => {
      const cases: [string[], string][] = [
        [['WordDocument', '1Table', '\u0005SummaryInformation'], 'doc'],
        [['Workbook', '\u0005SummaryInformation'], 'xls'],
        [['Book'], 'xls'],
        [['Current User', 'PowerPoint Document'], 'ppt'],
      ];
      for (const [names, format] of cases) {
        const file = await writeTemp(dir, `${format}.bin`, makeCfb(names));
        const detected = await detectDocumentType(file);
        assert.equal(detected?.format, format, names.join(','));
        assert.equal(detected?.kind, 'office');
      }
    });
  });

  it('refuses, with a reason, an encrypted Office file, an unknown compound file, an empty file and unknown bytes', async () => {
    await withWorkDir(async (dir) => {
      const encrypted = await sniffDocument(await writeTemp(dir, 'a.docx', makeCfb(['EncryptionInfo', 'EncryptedPackage'])));
      assert.equal(encrypted.type, null);
      assert.match(encrypted.reason ?? '', /password-protected/);

      const msg = await sniffDocument(await writeTemp(dir, 'b.msg', makeCfb(['__substg1.0_0037001F'])));
      assert.equal(msg.type, null);
      assert.match(msg.reason ?? '', /not a Word, Excel or PowerPoint/);

      const empty = await sniffDocument(await writeTemp(dir, 'c.pdf', ''));
      assert.match(empty.reason ?? '', /empty/);

      const gif = await sniffDocument(await writeTemp(dir, 'd.pdf', await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).gif().toBuffer()));
      assert.equal(gif.type, null);
      assert.match(gif.reason ?? '', /GIF.*Upload one of: PDF/);

      assert.equal(await detectDocumentType(await writeTemp(dir, 'e.txt', 'just some text, no magic here')), null);
    });
  });

  it('lists the accepted formats', () => {
    assert.deepEqual([...ACCEPTED_FORMATS].sort(), ['doc', 'docx', 'jpeg', 'odp', 'ods', 'odt', 'pdf', 'png', 'ppt', 'pptx', 'xls', 'xlsx']);
  });

  it('detects every real-world fixture as its manifest says', { skip: CORPUS_SKIP }, async () => {
    const expected: Record<string, string | null> = {
      'tracemonkey.pdf': 'pdf',
      'helloworld-bad.pdf': 'pdf',
      'bug1020226.pdf': 'pdf',
      'not-a-pdf-jpeg-bytes.pdf': 'jpeg',
      'drawing.docx': 'docx',
      'truncated62886.docx': 'docx',
      'SampleDoc.doc': 'doc',
      'testPictures.doc': 'doc',
      '45544.xlsx': 'xlsx',
      'themes.pptx': 'pptx',
      'Landscape_6.jpg': 'jpeg',
      'pil_sample_cmyk.jpg': 'jpeg',
      'basn2c16.png': 'png',
      'broken_data_stream.png': 'png',
      'MANIFEST.md': null,
    };
    for (const [name, format] of Object.entries(expected)) {
      assert.equal((await detectDocumentType(corpus(name)))?.format ?? null, format, name);
    }
  });
});
