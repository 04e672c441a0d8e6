/**
 * Analytics per book version (issue 29, docs/book-versions.md): the
 * `version` filter of the analytics operations and exports, checked against
 * a computation of our own from the events this test sends through the
 * reader's real event endpoint, before and after a version 2 that inserts a
 * page in the middle of the document.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { asc } from 'drizzle-orm';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';
import { bookPageFingerprints } from '../../src/modules/books/books.tables.ts';
import { matchPages, textHash } from '../../src/modules/books/page-fingerprints.ts';
import { sendMultipart, startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';

/** A PDF whose pages carry these headings (one page each), drawn large so each page's image differs too. */
async function headingsPdf(headings: string[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.HelveticaBold);
  headings.forEach((heading) => {
    const page = doc.addPage([595, 842]);
    page.drawText(heading, { x: 60, y: 700, size: 40, font, color: rgb(0.1, 0.1, 0.4) });
    page.drawText(`Section about ${heading.toLowerCase()}: what it is and how to use it.`, { x: 60, y: 620, size: 14, font });
    // A block whose place depends on the heading, so the small image hashes differ between pages.
    page.drawRectangle({ x: 60 + (heading.charCodeAt(0) % 4) * 110, y: 150 + (heading.length % 5) * 60, width: 120, height: 200, color: rgb(0.2, 0.5, 0.3) });
  });
  return Buffer.from(await doc.save());
}

interface Sent {
  session: string;
  version: number;
  page: number;
  ms: number;
}

describe('analytics per book version', () => {
  let svc: TestService;
  let key: string;
  let id: string;
  const sent: Sent[] = [];
  const seqs = new Map<string, number>();

  before(async () => {
    svc = await startService();
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  const get = async (path: string, query: Record<string, string | number | boolean> = {}) => {
    const res = await svc.request('GET', `/v1/analytics/${path}`, { key, query: { book_id: id, ...query } });
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.body as { data: never; meta?: Record<string, unknown> };
  };
  /** One page segment through POST /read/{id}/events, as the reader showing `version` sends it. */
  async function click(session: string, version: number, page: number) {
    const seq = seqs.get(session) ?? 0;
    seqs.set(session, seq + 1);
    const res = await fetch(`${svc.url}/read/${id}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
      body: JSON.stringify({ session_id: session, events: [{ seq, type: 'link_clicked', page, metadata: { url: 'https://shop.example/' } }], context: { ver: version } }),
    });
    assert.equal(res.status, 200, await res.text());
  }
  async function read(session: string, version: number, page: number, ms: number) {
    const seq = seqs.get(session) ?? 0;
    seqs.set(session, seq + 1);
    const res = await fetch(`${svc.url}/read/${id}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
      body: JSON.stringify({ session_id: session, events: [{ seq, type: 'page_segment_completed', page, active_ms: ms }], context: { ver: version } }),
    });
    assert.equal(res.status, 200, await res.text());
    sent.push({ session, version, page, ms });
  }
  /** Page figures computed here from what was sent: segments and active time per page, readers (anonymous visits). */
  function expectedPages(events: Sent[], pageCount: number) {
    return Array.from({ length: pageCount }, (_, i) => {
      const on = events.filter((e) => e.page === i + 1);
      return { page_number: i + 1, total_segments: on.length, total_active_ms: on.reduce((n, e) => n + e.ms, 0), unique_readers: new Set(on.map((e) => e.session)).size };
    });
  }
  const pageFigures = (rows: { page_number: number; total_segments: number; total_active_ms: number; unique_readers: number }[]) =>
    rows.map(({ page_number, total_segments, total_active_ms, unique_readers }) => ({ page_number, total_segments, total_active_ms, unique_readers }));
  const csv = async (kind: string, query: string) => {
    const res = await fetch(`${svc.url}/v1/exports/books/${id}/${kind}?bom=false${query}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    return (await res.text()).trim().split(/\r?\n/);
  };

  it('counts each version apart and every version in total; version 1 keeps its figures after the switch', async () => {
    const upload = await uploadFile(svc, key, await headingsPdf(['Alpha', 'Bravo', 'Charlie', 'Delta']), 'guide.pdf', { status: 'publish' });
    assert.equal(upload.status, 202, upload.text);
    const first = await waitForBatch(svc, key, upload.body.data.batch_id);
    assert.equal(first.status, 'completed');
    id = first.books[0].random_id;

    const [a, b] = [randomUUID(), randomUUID()];
    await read(a, 1, 1, 4000);
    await read(a, 1, 2, 6000);
    await read(a, 1, 3, 2500);
    await read(b, 1, 3, 7000);
    await read(b, 1, 4, 1000);
    const v1Before = pageFigures((await get('page-performance', { version: 1 })).data);
    assert.deepEqual(v1Before, expectedPages(sent, 4));
    assert.deepEqual(pageFigures((await get('page-performance')).data), v1Before, 'one version: the total is version 1');

    // Version 2 inserts a page ("New chapter") between Bravo and Charlie.
    const res = await sendMultipart(svc, key, 'POST', `/v1/books/${id}/versions`, {}, { field: 'files[]', bytes: await headingsPdf(['Alpha', 'Bravo', 'New chapter', 'Charlie', 'Delta']), name: 'guide v2.pdf' });
    assert.equal(res.status, 202, res.text);
    assert.equal((await waitForBatch(svc, key, res.body.data.batch_id)).status, 'completed');

    assert.deepEqual(pageFigures((await get('page-performance', { version: 1 })).data), v1Before, 'version 1 unchanged by the switch');
    const [c, d] = [randomUUID(), randomUUID()];
    await read(c, 2, 1, 3000);
    await read(c, 2, 3, 9000);
    await read(c, 2, 4, 2000);
    await read(c, 2, 5, 1500);
    await read(d, 2, 4, 5000);
    const v1 = sent.filter((e) => e.version === 1);
    const v2 = sent.filter((e) => e.version === 2);

    assert.deepEqual(pageFigures((await get('page-performance', { version: 1 })).data), expectedPages(v1, 4));
    assert.deepEqual(pageFigures((await get('page-performance', { version: 2 })).data), expectedPages(v2, 5));
    assert.deepEqual(pageFigures((await get('page-performance')).data), expectedPages(sent, 5), 'without the filter: every version, as before');
    assert.deepEqual((await get('page-performance', { version: 7 })).data, [], 'a version the book does not have matches nothing');

    // Pages across versions: version 2's pages 4 and 5 are version 1's 3 and 4 (a page was inserted before them); its page 3 is new.
    const fingerprints = await svc.runtime.database.db.select().from(bookPageFingerprints).orderBy(asc(bookPageFingerprints.version), asc(bookPageFingerprints.pageNumber));
    assert.deepEqual(fingerprints.filter((f) => f.version === 2).map((f) => [f.pageNumber, f.matchVersion, f.matchPage]),
      [[1, 1, 1], [2, 1, 2], [3, null, null], [4, 1, 3], [5, 1, 4]]);
    assert.equal(fingerprints.filter((f) => f.version === 1).length, 4);
    const asInV2 = new Map([[1, 1], [2, 2], [3, 4], [4, 5]]);
    const followed = [...v2, ...v1.map((e) => ({ ...e, page: asInV2.get(e.page)! }))];
    assert.deepEqual(pageFigures((await get('page-performance', { version: 2, across_versions: true })).data), expectedPages(followed, 5));
    assert.deepEqual(pageFigures((await get('page-performance', { across_versions: true })).data), expectedPages(followed, 5), 'the current version by default');
    const acrossCsv = await csv('page-performance', '&across_versions=true');
    assert.deepEqual(acrossCsv.slice(1).map((line) => line.split(',').slice(0, 4).map(Number)),
      expectedPages(followed, 5).map((p) => [p.page_number, p.unique_readers, p.total_segments, p.total_active_ms]));

    // Visits, events, readers, reader pages, the flow, a visit's pages and the journey.
    const visits = async (version?: number) => ((await get('book-view-events', version ? { version } : {})).data as { id: number }[]).map((v) => v.id);
    const [v1Visits, v2Visits, allVisits] = [await visits(1), await visits(2), await visits()];
    assert.deepEqual([v1Visits.length, v2Visits.length], [2, 2]);
    assert.deepEqual([...v1Visits, ...v2Visits].sort(), [...allVisits].sort());
    const segments = async (version?: number) => ((await get('interaction-events', { event_type: 'page_segment_completed', ...(version ? { version } : {}) })).data as unknown[]).length;
    assert.deepEqual([await segments(1), await segments(2), await segments()], [v1.length, v2.length, sent.length]);
    const readers = async (version?: number) => ((await get('readers', { include_anonymous: true, ...(version ? { version } : {}) })).data as { session_id: string }[]).map((r) => r.session_id).sort();
    assert.deepEqual(await readers(2), [c, d].sort());
    assert.deepEqual(await readers(), [a, b, c, d].sort());
    const flow = (await get('book-flow', { version: 2 })) as unknown as { data: { pages: { page_number: number; views: number }[]; transitions: { from_page: number; to_page: number; count: number }[] }; meta: { visits: number } };
    assert.equal(flow.meta.visits, 2);
    assert.deepEqual(flow.data.pages.map((p) => p.views), expectedPages(v2, 5).map((p) => p.total_segments));
    assert.deepEqual(flow.data.transitions.map((t) => [t.from_page, t.to_page, t.count]).sort(), [[1, 3, 1], [3, 4, 1], [4, 5, 1]]);
    assert.equal(((await get('reading-session-pages', { view_event_id: v1Visits[0]!, version: 1 })).meta as { found: boolean }).found, true);
    assert.equal(((await get('reading-session-pages', { view_event_id: v1Visits[0]!, version: 2 })).meta as { found: boolean }).found, false);
    const bad = await svc.request('GET', '/v1/analytics/page-performance', { key, query: { book_id: id, version: 0 } });
    assert.equal(bad.status, 422, bad.text);

    // Audit rows copied from a reader event follow that event's version.
    await click(a, 1, 3);
    await click(c, 2, 5);
    await click(d, 2, 4);
    const clicks = async (version?: number) => ((await get('audit-log', { event_type: 'link_clicked', ...(version ? { version } : {}) })).data as { page_number: number }[]).map((e) => e.page_number).sort();
    assert.deepEqual([await clicks(1), await clicks(2), await clicks()], [[3], [4, 5], [3, 4, 5]]);

    // The exports take the same filter.
    const pagesCsv = await csv('page-performance', '&version=2');
    assert.equal(pagesCsv.length, 1 + 5);
    assert.deepEqual(pagesCsv.slice(1).map((line) => line.split(',').slice(0, 4).map(Number)),
      expectedPages(v2, 5).map((p) => [p.page_number, p.unique_readers, p.total_segments, p.total_active_ms]));
    assert.equal((await csv('interaction-events', '&version=1&event_type=page_segment_completed')).length, 1 + v1.length);
    assert.equal((await csv('interaction-events', '&event_type=page_segment_completed')).length, 1 + sent.length);

    // Leads take the version of the visit they were sent from (same book and session).
    const form = await svc.request('PUT', `/v1/books/${id}/lead-form`, { key, body: { enabled: true, fields: [{ name: 'email', required: true }] } });
    assert.equal(form.status, 200, form.text);
    for (const [session, email] of [[a, 'ann@example.com'], [c, 'cy@example.com'], [d, 'di@example.com']] as const) {
      const lead = await fetch(`${svc.url}/read/${id}/lead`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
        body: JSON.stringify({ session_id: session, seq: seqs.get(session) ?? 0, email }),
      });
      assert.equal(lead.status, 200, await lead.text());
    }
    const leadEmails = async (query: string) => (await csv('leads', query)).slice(1).map((line) => line.split(',')[3]).sort();
    assert.deepEqual(await leadEmails('&version=1'), ['ann@example.com']);
    assert.deepEqual(await leadEmails('&version=2'), ['cy@example.com', 'di@example.com']);
    assert.deepEqual(await leadEmails(''), ['ann@example.com', 'cy@example.com', 'di@example.com']);
  });
});

describe('page matching across versions', () => {
  it('matches a page by its text and a near image, never a changed or new one, each old page once', () => {
    const fp = (pageNumber: number, text: string, imageHash: string) => ({ pageNumber, textHash: textHash(text), imageHash });
    const old = [fp(1, 'Cover', 'ffff0000ffff0000'), fp(2, 'Prices  2026', '00ff00ff00ff00ff'), fp(3, 'Contact', '0f0f0f0f0f0f0f0f'), fp(4, '', 'f0f0f0f0f0f0f0f0')];
    const fresh = [
      fp(1, 'cover', 'ffff0000ffff0001'), // same text once normalised, 1 bit off: the same page
      fp(2, 'Prices 2026', 'ff00ff00ff00ff00'), // same text, a new picture: changed
      fp(3, 'Inserted', '0f0f0f0f0f0f0f0f'), // new text: new page
      fp(4, 'Contact!', '0f0f0f0f0f0f0f0f'),
      fp(5, '', 'f0f0f0f0f0f0f0f1'), // no text: the image alone, near
      fp(6, 'Contact', '0f0f0f0f0f0f0f0f'), // the old page 3 is already taken
    ];
    assert.deepEqual([...matchPages(fresh, old)], [[1, 1], [4, 3], [5, 4]]);
  });
});
