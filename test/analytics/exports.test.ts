/**
 * The eight CSV exports over HTTP, parsed back with csv-parse: headers, BOM,
 * CRLF, quoting, formula injection, non-ASCII names, the same numbers as the
 * queries, plans and scopes, and a client disconnecting mid-export. On
 * PostgreSQL the interaction-events export is one COPY: the same bytes as
 * its batched path, and a client leaving stops the statement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/modules/analytics/analytics-sql.ts';
import { EXPORT_COLUMNS } from '../../src/modules/analytics/exports.service.ts';
import { insertBook } from '../factories.ts';
import { eventually, startService, usingPostgres, type TestService } from '../helpers.ts';
import { expectedPages, insertAudit, insertLead, insertLink, insertViewer, insertVisit, type SeededVisit } from './analytics-seed.ts';

describe('CSV exports', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let other: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;
  let otherBook: Awaited<ReturnType<typeof insertBook>>;
  let alice: number;
  let zoe: number;
  let link: number;
  const visits: SeededVisit[] = [];

  before(async () => {
    svc = await startService({ worker: false, env: { EXPORT_BATCH_ROWS: 10 } });
    ws = await svc.workspace();
    other = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 5, name: 'Été catalogue' });
    otherBook = await insertBook(svc, other.id, { status: 'publish', pageCount: 5 });
    alice = await insertViewer(svc, ws.id, '=cmd@example.com');
    zoe = await insertViewer(svc, ws.id, 'zoë@exämple.com', 'Zoë Ñandú');
    link = await insertLink(svc, ws.id, book.id, '+Spring, "quoted" link', 'spring');
    visits.push(await insertVisit(svc, book, { session: 'e1', viewerId: alice, linkId: link, at: new Date('2026-03-01T23:30:00Z'), pages: [[1, 4000], [2, 6000], [2, 1000]], clicks: 1, host: '-evil.example' }));
    visits.push(await insertVisit(svc, book, { session: 'e2', viewerId: zoe, linkId: null, at: new Date('2026-03-02T10:00:00Z'), pages: [[1, 1000], [3, 5000]] }));
    visits.push(await insertVisit(svc, book, { session: 'e3', viewerId: null, linkId: null, at: new Date('2026-03-04T10:00:00Z'), pages: [[1, 2500], [5, 700]] }));
    // Enough segments for several batches of 10.
    for (let i = 0; i < 4; i++) {
      visits.push(await insertVisit(svc, book, { session: `bulk-${i}`, viewerId: zoe, linkId: null, at: new Date(Date.UTC(2026, 2, 5 + i, 8)), pages: [[1, 100 + i], [2, 200], [3, 300], [4, 400], [5, 500], [1, 50]] }));
    }
    await insertAudit(svc, book, { eventType: 'access_granted', viewerId: alice, email: '=cmd@example.com', at: new Date('2026-03-01T23:00:00Z') });
    await insertAudit(svc, book, { eventType: 'access_rejected', viewerId: null, email: '@mallory.example', at: new Date('2026-03-03T08:00:00Z'), reason: 'not_on_list' });
    await insertLead(svc, book, { name: '=HYPERLINK("http://evil.example","click")', email: 'lead@example.com', fields: { phone: '+33 1 23 45 67 89', company: 'Ça, Cie', message: 'Line one\r\nline "two"' }, at: new Date('2026-03-02T09:00:00Z') });
    await insertLead(svc, book, { name: 'Zoë Ñandú', email: 'zoë@exämple.com', at: new Date('2026-03-06T09:00:00Z') });
    await insertLead(svc, otherBook, { name: 'Not mine', email: 'other@example.com', at: new Date('2026-03-02T09:00:00Z') });
  });
  after(() => svc.stop());

  async function download(path: string, query: Record<string, string | number | boolean> = {}, key = ws.key) {
    const url = new URL(`${svc.url}/v1/exports/${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, headers: response.headers, bytes, text: bytes.toString('utf8') };
  }
  const records = (text: string) => parse(text, { bom: true, columns: true }) as Record<string, string>[];

  it('serves every export as an attachment with a BOM, CRLF line ends and its documented header', async () => {
    const kinds: [string, keyof typeof EXPORT_COLUMNS, string][] = [
      [`analytics/${book.randomId}`, 'analytics', 'analytics'],
      [`books/${book.randomId}/access-audit`, 'audit', 'access-audit'],
      [`books/${book.randomId}/audit-log`, 'audit', 'audit-log'],
      [`books/${book.randomId}/interaction-events`, 'interactions', 'interaction-events'],
      [`books/${book.randomId}/leads`, 'leads', 'leads'],
      [`books/${book.randomId}/page-performance`, 'pages', 'page-performance'],
      [`books/${book.randomId}/reader-pages`, 'readerPages', 'reader-pages'],
      [`books/${book.randomId}/readers`, 'readers', 'readers'],
    ];
    for (const [path, columns, kind] of kinds) {
      const res = await download(path);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="ete-catalogue-${book.randomId}-${kind}.csv"`);
      assert.deepEqual([...res.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], path);
      const header = res.text.slice(1).split('\r\n')[0]!;
      assert.equal(header, EXPORT_COLUMNS[columns].join(','), path);
      assert.ok(!/[^\r]\n/.test(res.text), `${path}: a bare LF line end`);
      const noBom = await download(path, { bom: false });
      assert.equal(noBom.text, res.text.slice(1), path);
    }
  });

  it('refuses without the Company plan (but leads are on every plan), without exports:read, and for another workspace\'s book', async () => {
    const free = await svc.workspace({ plan: 'free' });
    const freeBook = await insertBook(svc, free.id, { status: 'publish', pageCount: 3 });
    for (const path of [`analytics/${freeBook.randomId}`, `books/${freeBook.randomId}/audit-log`, `books/${freeBook.randomId}/readers`]) {
      const res = await download(path, {}, free.key);
      assert.equal(res.status, 403, path);
      assert.equal(JSON.parse(res.text).error.type, 'PlanRestrictionException');
    }
    assert.equal((await download(`books/${freeBook.randomId}/leads`, {}, free.key)).status, 200);
    const narrow = await svc.key(ws.id, ['analytics:read']);
    assert.equal((await download(`books/${book.randomId}/leads`, {}, narrow.key)).status, 403);
    const foreign = await download(`books/${otherBook.randomId}/interaction-events`);
    const missing = await download('books/nope/interaction-events');
    assert.equal(foreign.status, 404);
    assert.equal(foreign.text, missing.text);
    assert.equal((await download(`books/${book.randomId}/interaction-events`, { date: 'yesterday' })).status, 422);
  });

  it('defuses formula injection in typed text and keeps non-ASCII text, quotes and line breaks intact', async () => {
    const leads = records((await download(`books/${book.randomId}/leads`)).text);
    assert.equal(leads.length, 2);
    assert.equal(leads[0]!.name, `'=HYPERLINK("http://evil.example","click")`);
    assert.equal(leads[0]!.phone, "'+33 1 23 45 67 89");
    assert.equal(leads[0]!.company, 'Ça, Cie');
    assert.equal(leads[0]!.message, 'Line one\r\nline "two"');
    assert.equal(leads[0]!.submitted_at, '2026-03-02T09:00:00.000Z');
    assert.equal(leads[1]!.name, 'Zoë Ñandú');
    assert.equal(leads[1]!.email, 'zoë@exämple.com');

    const events = records((await download(`books/${book.randomId}/interaction-events`, { session_id: 'e1' })).text);
    assert.ok(events.every((e) => e.viewer_email === "'=cmd@example.com"));
    assert.ok(events.every((e) => e.source_host === "'-evil.example"));
    assert.ok(events.every((e) => e.tracked_link_name === `'+Spring, "quoted" link`));
    const click = events.find((e) => e.event_type === 'link_clicked')!;
    assert.deepEqual(JSON.parse(click.metadata!), [{ url: 'https://shop.example/=cmd' }]);
    const audit = records((await download(`books/${book.randomId}/access-audit`)).text);
    assert.deepEqual(audit.map((a) => [a.event_type, a.viewer_email]), [['access_granted', "'=cmd@example.com"], ['access_rejected', "'@mallory.example"]]);
    const readers = records((await download(`books/${book.randomId}/readers`)).text);
    assert.ok(readers.some((r) => r.viewer_email === 'zoë@exämple.com'));
  });

  it('streams every row across batches, agreeing with the queries and an independent sum', async () => {
    const events = records((await download(`books/${book.randomId}/interaction-events`)).text);
    const api = [];
    let cursor: string | undefined;
    do {
      const page = await svc.request('GET', '/v1/analytics/interaction-events', { key: ws.key, query: { book_id: book.randomId, limit: 7, ...(cursor ? { cursor } : {}) } });
      api.push(...page.body.data);
      cursor = page.body.meta.next_cursor ?? undefined;
    } while (cursor);
    assert.ok(events.length > 30);
    assert.deepEqual(events.map((e) => Number(e.id)), api.map((e) => e.id));

    const total = visits.reduce((n, v) => n + v.pages.reduce((m, [, ms]) => m + ms, 0), 0);
    const pages = records((await download(`books/${book.randomId}/page-performance`)).text);
    assert.equal(pages.reduce((n, p) => n + Number(p.total_active_ms), 0), total);
    assert.deepEqual(pages.map((p) => Number(p.median_active_ms_per_segment)), expectedPages(visits, 5).map((e) => Math.round(e.median)));
    const perf = await svc.request('GET', '/v1/analytics/page-performance', { key: ws.key, query: { book_id: book.randomId } });
    assert.deepEqual(pages.map((p) => Number(p.total_active_ms)), perf.body.data.map((p: any) => p.total_active_ms));

    const identified = visits.filter((v) => v.viewerId !== null).reduce((n, v) => n + v.pages.reduce((m, [, ms]) => m + ms, 0), 0);
    const readerPages = records((await download(`books/${book.randomId}/reader-pages`)).text);
    assert.equal(readerPages.reduce((n, r) => n + Number(r.total_active_ms), 0), identified);
    const readerPagesApi = await svc.request('GET', '/v1/analytics/reader-pages', { key: ws.key, query: { book_id: book.randomId } });
    assert.deepEqual(readerPages.map((r) => [Number(r.viewer_id), Number(r.page_number), Number(r.total_active_ms)]), readerPagesApi.body.data.map((r: any) => [r.viewer_id, r.page_number, r.total_active_ms]));

    const readers = records((await download(`books/${book.randomId}/readers`, { include_anonymous: true })).text);
    assert.equal(readers.length, 3);
    assert.equal(readers.reduce((n, r) => n + Number(r.visits), 0), visits.length);
  });

  it('applies the filters and reads days in tz (the daily summary groups by the tz day)', async () => {
    const utc = records((await download(`analytics/${book.randomId}`, { date: '2026-03-01,2026-03-02' })).text);
    assert.deepEqual(utc.map((d) => [d.date, d.visits]), [['2026-03-01', '1'], ['2026-03-02', '1']]);
    const tokyo = records((await download(`analytics/${book.randomId}`, { date: '2026-03-01,2026-03-02', tz: 'Asia/Tokyo' })).text);
    assert.deepEqual(tokyo.map((d) => [d.date, d.visits, d.readers]), [['2026-03-02', '2', '2']]);
    const linked = records((await download(`books/${book.randomId}/interaction-events`, { tracked_link_id: link, event_type: 'page_segment_completed' })).text);
    assert.deepEqual(linked.map((e) => e.active_ms), ['4000', '6000', '1000']);
    const page = records((await download(`books/${book.randomId}/reader-pages`, { viewer_id: zoe, page_number: 3 })).text);
    assert.deepEqual(page.map((r) => r.segments), ['5']);
    const rejected = records((await download(`books/${book.randomId}/audit-log`, { event_type: 'access_rejected' })).text);
    assert.deepEqual(rejected.map((r) => r.reason), ['not_on_list']);
    const leadsInRange = records((await download(`books/${book.randomId}/leads`, { date: '2026-03-06' })).text);
    assert.deepEqual(leadsInRange.map((l) => l.name), ['Zoë Ñandú']);
  });

  it('stops reading batches when the client disconnects mid-export', async () => {
    await svc.runtime.database.db.execute(sql`
      insert into interaction_events (workspace_id, book_id, session_id, sequence, event_type, page_number, active_ms, source_type, occurred_at)
      select ${ws.id}, ${book.id}, 'many', g, 'page_segment_completed', 1 + g % 5, 1000, 'direct', timestamptz '2026-01-01' + (g || ' seconds')::interval
      from generate_series(1, 20000) g`);
    const exportsService = svc.runtime.services.exports;
    const batchesBefore = exportsService.batchesRead;
    const controller = new AbortController();
    const response = await fetch(`${svc.url}/v1/exports/books/${book.randomId}/interaction-events`, { headers: { authorization: `Bearer ${ws.key}` }, signal: controller.signal });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => {});
    await eventually(async () => exportsService.active === 0);
    const batches = exportsService.batchesRead - batchesBefore;
    // 20,000 rows in batches of 10 would be 2,000 batches; the walk stopped long before.
    assert.ok(batches < 1000, `read ${batches} batches after the client left`);
  });
});

describe('CSV exports of typed text, through COPY and through batches', () => {
  let svc: TestService;
  let batched: TestService | null = null;
  let ws: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;

  // Text a reader could send: formula starts, quotes, commas, CR and LF inside cells, non-ASCII, empty strings.
  const TYPED = ['=SUM(A1:A9)', '+1', '-2', '@me', '\tTab', '\rCR', 'line one\nline two', 'crlf\r\ninside', 'say "hi", then go', 'Zoë Ñandú 東京', '', "it's", 'plain'];
  const METADATA = [null, '[]', '[{"url": "https://shop.example/=cmd", "note": "a \\"quoted\\", text\\nwith a break"}]', '{"b": 1.50, "a": [true, null]}', 'null', '"=free text"', '-5', '""'];
  const ACTIVE = [null, 0, 1, 999, 1000, 4500, 123456789];
  const COORDINATES = [null, 48.8566, -0.1278, 0, 51.5, 139.6917];

  before(async () => {
    svc = await startService({ worker: false, env: { EXPORT_BATCH_ROWS: 10, EXPORT_COPY_SLOTS: 1 } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 5, name: 'Typed text' });
    const viewer = await insertViewer(svc, ws.id, '-viewer@example.com');
    const link = await insertLink(svc, ws.id, book.id, '@link, "named"', 'typed');
    for (let i = 0; i < 40; i++) {
      const text = TYPED[i % TYPED.length]!;
      const metadata = METADATA[i % METADATA.length]!;
      const coordinate = COORDINATES[i % COORDINATES.length]!;
      await svc.runtime.database.db.execute(sql`
        insert into interaction_events (workspace_id, book_id, session_id, sequence, event_type, page_number, active_ms, exit_reason, source_type, source_host,
          viewer_id, tracked_link_id, country, region, city, latitude, longitude, metadata, occurred_at, created_at)
        values (${ws.id}, ${book.id}, ${text || 'empty'}, ${i}, 'page_segment_completed', ${1 + (i % 5)}, ${ACTIVE[i % ACTIVE.length]!}, ${i % 3 ? '' : 'hidden'}, 'direct',
          ${text}, ${i % 2 ? viewer : null}, ${i % 4 ? null : link}, ${i % 2 ? 'FR' : ''}, ${TYPED[(i + 3) % TYPED.length]!}, ${TYPED[(i + 7) % TYPED.length]!},
          ${coordinate}, ${coordinate === null ? null : -coordinate}, ${metadata}::jsonb,
          timestamptz '2026-03-01T10:00:00.123Z' + ${`${i % 7} seconds`}::interval, timestamptz '2026-03-02T00:00:00.999Z')`);
    }
    for (let i = 0; i < 14; i++) {
      const metadata = METADATA[i % METADATA.length]!;
      await svc.runtime.database.db.execute(sql`
        insert into audit_events (workspace_id, book_id, source, source_event_id, viewer_id, viewer_email, event_type, page_number, active_ms, reason, metadata, occurred_at)
        values (${ws.id}, ${book.id}, 'gate', ${1000 + i}, ${i % 2 ? viewer : null}, ${TYPED[i % TYPED.length]!}, ${i % 2 ? 'access_granted' : 'page_exited'}, ${i % 3 ? null : 2},
          ${ACTIVE[i % ACTIVE.length]!}, ${TYPED[(i + 5) % TYPED.length]!}, ${metadata}::jsonb, timestamptz '2026-03-01T10:00:00.5Z' + ${`${i} seconds`}::interval)`);
    }
    if (usingPostgres) {
      // The same database, exports in batches only.
      batched = await startService({ worker: false, database: { kind: 'postgres', url: svc.runtime.database.url!, poolSize: 3 }, env: { EXPORT_BATCH_ROWS: 10, EXPORT_COPY_SLOTS: 0 } });
    }
  });
  after(async () => {
    await batched?.stop();
    await svc.stop();
  });

  async function download(service: TestService, query = '', kind = 'interaction-events') {
    const response = await fetch(`${service.url}/v1/exports/books/${book.randomId}/${kind}${query}`, { headers: { authorization: `Bearer ${ws.key}` } });
    assert.equal(response.status, 200);
    return Buffer.from(await response.arrayBuffer());
  }

  it('writes typed text defused, quoted and intact, with CRLF record ends and the times, seconds and JSON formatted', async () => {
    const bytes = await download(svc);
    const rows = parse(bytes, { bom: true, columns: true }) as Record<string, string>[];
    assert.equal(rows.length, 40);
    // Records end with CRLF; line breaks inside quoted cells stay as they were typed.
    const text = bytes.toString('utf8');
    assert.ok(text.endsWith('\r\n'));
    assert.equal(parse(bytes, { bom: true, record_delimiter: '\r\n' }).length, 41);
    const first = rows.find((r) => r.session_id === "'=SUM(A1:A9)")!;
    assert.equal(first.occurred_at, '2026-03-01T10:00:00.123Z');
    assert.equal(first.created_at, '2026-03-02T00:00:00.999Z');
    assert.equal(first.source_host, "'=SUM(A1:A9)");
    assert.equal(first.tracked_link_name, `'@link, "named"`);
    assert.deepEqual(new Set(rows.map((r) => r.session_id)), new Set(["'=SUM(A1:A9)", "'+1", "'-2", "'@me", "'\tTab", "'\rCR", 'line one\nline two', 'crlf\r\ninside', 'say "hi", then go', 'Zoë Ñandú 東京', 'empty', "it's", 'plain']));
    assert.ok(rows.some((r) => r.viewer_email === "'-viewer@example.com"));
    assert.deepEqual(new Set(rows.map((r) => r.active_seconds)), new Set(['', '0', '0.001', '0.999', '1', '4.5', '123456.789']));
    assert.deepEqual(new Set(rows.map((r) => r.latitude)), new Set(['', '48.8566', '-0.1278', '0', '51.5', '139.6917']));
    assert.deepEqual(new Set(rows.map((r) => r.metadata)), new Set(['', '[]', '[{"url": "https://shop.example/=cmd", "note": "a \\"quoted\\", text\\nwith a break"}]', '{"a": [true, null], "b": 1.50}', "'=free text", "'-5"]));
    assert.deepEqual(new Set(rows.map((r) => r.exit_reason)), new Set(['', 'hidden']));
    // Empty text is an empty cell, never a quoted "".
    assert.ok(!text.includes(',"",'));

    const audit = parse(await download(svc, '', 'audit-log'), { bom: true, columns: true }) as Record<string, string>[];
    assert.equal(audit.length, 14);
    assert.deepEqual(audit.slice(0, 4).map((a) => [a.occurred_at, a.viewer_email, a.reason, a.metadata, a.active_seconds]), [
      ['2026-03-01T10:00:00.500Z', "'=SUM(A1:A9)", "'\rCR", '', ''],
      ['2026-03-01T10:00:01.500Z', "'+1", 'line one\nline two', '[]', '0'],
      ['2026-03-01T10:00:02.500Z', "'-2", 'crlf\r\ninside', '[{"url": "https://shop.example/=cmd", "note": "a \\"quoted\\", text\\nwith a break"}]', '0.001'],
      ['2026-03-01T10:00:03.500Z', "'@me", 'say "hi", then go', '{"a": [true, null], "b": 1.50}', '0.999'],
    ]);
    assert.deepEqual(new Set(audit.map((a) => a.metadata)), new Set(['', '[]', '[{"url": "https://shop.example/=cmd", "note": "a \\"quoted\\", text\\nwith a break"}]', '{"a": [true, null], "b": 1.50}', "'=free text", "'-5"]));
    const access = parse(await download(svc, '', 'access-audit'), { bom: true, columns: true }) as Record<string, string>[];
    assert.deepEqual(access.map((a) => a.event_type), Array(7).fill('access_granted'));
  });

  it('writes the same bytes through COPY and through batches (PostgreSQL)', { skip: !usingPostgres && 'COPY is PostgreSQL only' }, async () => {
    const exportsService = svc.runtime.services.exports;
    const batchesBefore = exportsService.batchesRead;
    const copied = await download(svc);
    assert.equal(exportsService.batchesRead, batchesBefore, 'the COPY path read no batches');
    const inBatches = await download(batched!);
    assert.ok(batched!.runtime.services.exports.batchesRead >= 4);
    assert.equal(copied.toString('utf8'), inBatches.toString('utf8'));
    assert.ok(copied.equals(inBatches));
    const filtered = '?bom=false&session_id=' + encodeURIComponent('say "hi", then go');
    assert.ok((await download(svc, filtered)).equals(await download(batched!, filtered)));
    const none = '?date=2020-01-01';
    assert.ok((await download(svc, none)).equals(await download(batched!, none)));
    for (const kind of ['audit-log', 'access-audit']) {
      const before = exportsService.batchesRead;
      const viaCopy = await download(svc, '', kind);
      assert.equal(exportsService.batchesRead, before, kind);
      assert.ok(viaCopy.equals(await download(batched!, '', kind)), kind);
    }
  });

  it('stops the COPY statement when the client disconnects mid-export, and runs batches while every COPY slot is taken (PostgreSQL)', { skip: !usingPostgres && 'COPY is PostgreSQL only' }, async () => {
    const db = svc.runtime.database.db;
    const big = await insertBook(svc, ws.id, { status: 'publish', pageCount: 5, name: 'Big' });
    await db.execute(sql`
      insert into interaction_events (workspace_id, book_id, session_id, sequence, event_type, page_number, active_ms, source_type, occurred_at, metadata)
      select ${ws.id}, ${big.id}, 'many', g, 'page_segment_completed', 1 + g % 5, 1000, 'direct', timestamptz '2026-01-01' + (g || ' seconds')::interval,
             '[{"padding": "a long enough row to fill the socket buffers quickly, so the export cannot finish before the client leaves"}]'
      from generate_series(1, 300000) g`);
    const copies = async () => rowsOf<{ n: number }>(await db.execute(sql`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query ilike 'copy (%'`))[0]!.n;
    const controller = new AbortController();
    const response = await fetch(`${svc.url}/v1/exports/books/${big.randomId}/interaction-events`, { headers: { authorization: `Bearer ${ws.key}` }, signal: controller.signal });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    await reader.read();
    // The client reads no more: the statement waits on its socket.
    assert.equal(await copies(), 1);
    // The one COPY slot is taken: another export takes the batches, the same bytes.
    const exportsService = svc.runtime.services.exports;
    const batchesBefore = exportsService.batchesRead;
    const whileHeld = await download(svc);
    assert.ok(exportsService.batchesRead > batchesBefore);
    assert.ok(whileHeld.equals(await download(batched!)));
    controller.abort();
    await reader.cancel().catch(() => {});
    await eventually(async () => (await copies()) === 0);
    await eventually(async () => exportsService.active === 0);
    // The pool still serves (the connection was discarded, not returned mid-COPY).
    assert.equal((await download(svc, '?date=2020-01-01')).length > 0, true);
  });
});
