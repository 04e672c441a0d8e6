/**
 * Bounded resources (issue 10): office zip bombs are refused before
 * LibreOffice inflates them, and documents over MAX_PAGES_PER_BOOK fail their
 * batch at once, both with a message for the uploader.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findSoffice } from '../../src/modules/conversion/office-to-pdf.ts';
import { makePdf } from '../documents.ts';
import { startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';
import { makeZip } from './zip-maker.ts';

const NO_OFFICE = (await findSoffice()) ? false : 'LibreOffice is not installed';

/** A .docx whose document.xml is `megabytes` MB of paragraphs: it packs about 1,000 times smaller. */
function makeDocxBomb(megabytes: number): Buffer {
  const paragraph = '<w:p><w:r><w:t>bomb</w:t></w:r></w:p>';
  const body = paragraph.repeat(Math.ceil((megabytes * 1024 * 1024) / paragraph.length));
  const xml = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;
  return makeZip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>') },
    { name: '_rels/.rels', data: Buffer.from('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>') },
    { name: 'word/document.xml', data: Buffer.from(xml) },
  ]);
}

describe('bounded conversion resources', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService({ env: { MAX_PAGES_PER_BOOK: 5, PAGE_WIDTHS: '320' } });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  it('refuses an office zip bomb before LibreOffice unpacks it, with a clear message', async () => {
    const bomb = makeDocxBomb(300);
    assert.ok(bomb.length < 2 * 1024 * 1024, `the bomb is ${bomb.length} bytes`);
    const res = await uploadFile(svc, key, bomb, 'bomb.docx');
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.data.source_format, 'docx');
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'failed');
    assert.equal(batch.error.code, 'archive_too_large');
    assert.match(batch.error.message, /word\/document\.xml.*would grow from .* to 300 MB/);
    assert.match(batch.error.message, /save it again/);
  });

  it('converts an ordinary .docx under the same checks and memory limit', { skip: NO_OFFICE }, async () => {
    const paragraph = '<w:p><w:r><w:t>An ordinary paragraph of an ordinary document.</w:t></w:r></w:p>';
    const docx = makeZip([
      { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>') },
      { name: '_rels/.rels', data: Buffer.from('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>') },
      { name: 'word/document.xml', data: Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${paragraph.repeat(20)}</w:body></w:document>`) },
    ]);
    const res = await uploadFile(svc, key, docx, 'ordinary.docx');
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
  });

  it('fails a document over MAX_PAGES_PER_BOOK at once, saying how many pages are allowed', async () => {
    const res = await uploadFile(svc, key, await makePdf({ pages: 8 }), 'long.pdf');
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'failed');
    assert.equal(batch.error.code, 'too_many_pages');
    assert.equal(batch.error.message, 'This document has 8 pages; this server converts at most 5 pages per book. Split it into parts and upload each.');
    assert.equal(batch.books[0].page_images_status, 'failed');
    const ok = await uploadFile(svc, key, await makePdf({ pages: 5 }), 'five.pdf');
    assert.equal((await waitForBatch(svc, key, ok.body.data.batch_id)).status, 'completed');
  });
});
