/**
 * Webhooks through HTTP with real receivers on 127.0.0.1 (allowed through
 * OUTBOUND_ALLOWED_HOSTS): subscriptions, Standard Webhooks signatures checked
 * with the unmodified `standardwebhooks` package, the retry schedule (time is
 * driven by moving next_attempt_at, never by waiting), 410 and five days of
 * failures, redelivery, filters by book and tracked link, the sample dispatch,
 * workspace isolation and the refusals of unsafe target URLs.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { webhookDeliveries, webhookSubscriptions } from '../../src/modules/webhooks/webhooks.tables.ts';
import { RETRY_DELAYS_MS } from '../../src/modules/webhooks/schedule.ts';
import { insertBook } from '../factories.ts';
import { eventually, startService, type TestService } from '../helpers.ts';
import { startReceiver, verify, type Receiver } from './receiver.ts';

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('webhooks', () => {
  let svc: TestService;
  let receiver: Receiver;
  let ws: { id: number; key: string };

  before(async () => {
    svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', TRUST_PROXY: true } });
    ws = await svc.workspace();
    receiver = await startReceiver();
  });
  after(async () => {
    await svc?.stop();
    await receiver?.close();
  });

  const db = () => svc.runtime.database.db;
  const subscribe = async (body: Record<string, unknown>, key = ws.key) => {
    const res = await svc.request('POST', '/v1/webhook-subscriptions', { key, body: { name: 'Hook', target_url: `${receiver.url}/hook`, ...body } });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number; signing_secret: string; [k: string]: unknown };
  };
  const deliveriesOf = async (subscriptionId: number) => (await svc.request('GET', `/v1/webhook-subscriptions/${subscriptionId}/deliveries`, { key: ws.key, query: { limit: 200 } })).body.data as any[];
  const addSubscriber = async (bookRandomId: string, email: string) => {
    const res = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: bookRandomId, email } });
    assert.ok(res.status === 201 || res.status === 200, res.text);
    return res.body.data;
  };
  /** Moves the clock of one delivery: its next attempt is due now. */
  const makeDue = (deliveryId: number) => db().update(webhookDeliveries).set({ nextAttemptAt: new Date(Date.now() - 1) }).where(eq(webhookDeliveries.id, deliveryId));

  it('creates a subscription, shows its secret once, lists options, and signs deliveries verifiable with standardwebhooks', async () => {
    const book = await insertBook(svc, ws.id, { name: 'Signed book' });
    const created = await subscribe({ event_types: ['subscriber.added'], filters: [{ type: 'book', value: book.randomId }] });
    assert.match(created.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(created.has_signing_secret, true);
    assert.deepEqual(created.event_types, [{ value: 'subscriber.added', label: 'Access list entry added' }]);
    assert.deepEqual(created.filters, [{ type: 'book', value: book.randomId, label: 'Signed book' }]);

    const shown = await svc.request('GET', `/v1/webhook-subscriptions/${created.id}`, { key: ws.key });
    assert.equal(shown.status, 200);
    assert.equal(shown.body.data.signing_secret, undefined);
    assert.ok(!shown.text.includes(created.signing_secret));
    const [stored] = await db().select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, created.id));
    assert.ok(!stored!.secretEncrypted.includes(created.signing_secret.slice(6, 20)), 'the secret is stored encrypted');

    const options = await svc.request('GET', '/v1/webhook-subscriptions/options', { key: ws.key });
    assert.equal(options.status, 200);
    assert.ok(options.body.data.event_types.some((e: any) => e.value === 'link_clicked'));
    assert.ok(options.body.data.event_types.some((e: any) => e.value === 'access_granted'));
    assert.ok(options.body.data.event_types.some((e: any) => e.value === 'flipbook.deleted'));
    assert.deepEqual(options.body.data.providers.map((p: any) => p.value), ['standard', 'slack', 'discord', 'teams']);
    assert.ok(options.body.data.books.some((b: any) => b.value === book.randomId));

    const entry = await addSubscriber(book.randomId, 'ann@example.com');
    const request = await eventually(async () => receiver.received.find((r) => r.path === '/hook' && JSON.parse(r.body).data?.email === 'ann@example.com'));
    const payload = verify(created.signing_secret, request) as any;
    assert.equal(payload.type, 'subscriber.added');
    assert.equal(payload.data.id, entry.id);
    assert.match(request.headers['webhook-id']!, /^evt_/);

    const delivery = await eventually(async () => (await deliveriesOf(created.id)).find((d) => d.status === 'succeeded'));
    assert.equal(delivery.event_id, request.headers['webhook-id']);
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.response_status, 200);
    assert.equal(delivery.response_body, 'ok');
    assert.deepEqual(delivery.payload, JSON.parse(request.body));
    assert.ok(delivery.delivered_at);

    // Another workspace sees none of it.
    const other = await svc.workspace();
    for (const [method, path] of [['GET', `/v1/webhook-subscriptions/${created.id}`], ['PUT', `/v1/webhook-subscriptions/${created.id}`], ['DELETE', `/v1/webhook-subscriptions/${created.id}`],
      ['GET', `/v1/webhook-subscriptions/${created.id}/deliveries`], ['POST', `/v1/webhook-subscriptions/${created.id}/test`], ['POST', `/v1/webhook-subscriptions/${created.id}/rotate-secret`]] as const) {
      const res = await svc.request(method, path, { key: other.key, body: method === 'PUT' ? { name: 'x' } : undefined });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.type, 'ModelNotFoundException');
    }
    assert.equal((await svc.request('GET', '/v1/webhook-subscriptions', { key: other.key })).body.data.length, 0);
  });

  it('refuses bad input with 422 naming the field', async () => {
    const bad = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'x', target_url: `${receiver.url}/`, event_types: ['nope'], filters: [{ type: 'book', value: 'missing' }] } });
    assert.equal(bad.status, 422);
    assert.ok(bad.body.error.details['event_types.0']);
    const badFilter = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'x', target_url: `${receiver.url}/`, event_types: ['link_clicked'], filters: [{ type: 'book', value: 'missing' }] } });
    assert.equal(badFilter.status, 422);
    assert.ok(badFilter.body.error.details['filters.0.value']);
  });

  it('retries on the schedule with jitter, and never sends a success again', async () => {
    let failures = 3;
    const path = `/retry-${randomUUID()}`;
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === path && failures-- > 0 ? { status: 500, body: 'boom' } : previous(r));
    const created = await subscribe({ target_url: `${receiver.url}${path}`, event_types: ['subscriber.added'] });
    const book = await insertBook(svc, ws.id);
    await addSubscriber(book.randomId, 'retry@example.com');
    const deliveryId = (await eventually(async () => (await deliveriesOf(created.id))[0])).id as number;

    for (let attempt = 1; attempt <= 3; attempt++) {
      const row = await eventually(async () => {
        const [r] = await db().select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
        return r && r.attempts === attempt ? r : null;
      });
      assert.equal(row.status, 'pending');
      assert.equal(row.responseStatus, 500);
      const delay = row.nextAttemptAt!.getTime() - row.lastAttemptAt!.getTime();
      const expected = RETRY_DELAYS_MS[attempt - 1]!;
      assert.ok(delay >= expected * 0.9 - 50 && delay <= expected * 1.1 + 1000, `attempt ${attempt}: next in ${delay} ms, schedule ${expected} ms`);
      await makeDue(deliveryId);
    }
    const done = await eventually(async () => {
      const [r] = await db().select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
      return r?.status === 'succeeded' ? r : null;
    });
    assert.equal(done.attempts, 4);
    assert.equal(done.nextAttemptAt, null);
    // Even with its time moved, a succeeded delivery is not picked again.
    await makeDue(deliveryId);
    const detail = await svc.request('GET', `/v1/webhook-subscriptions/${created.id}/deliveries/${deliveryId}`, { key: ws.key });
    assert.deepEqual(detail.body.data.attempt_log.map((a: any) => [a.attempt, a.outcome, a.response_status]), [[1, 'failed', 500], [2, 'failed', 500], [3, 'failed', 500], [4, 'succeeded', 200]]);
    const requests = receiver.received.filter((r) => r.path === path);
    assert.equal(requests.length, 4);
    assert.equal(new Set(requests.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id on every retry');
    for (const r of requests) verify(created.signing_secret, r);
    // A test delivery is sent after, and the earlier success still counts one request.
    const test = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: ws.key });
    assert.equal(test.status, 202, test.text);
    await eventually(async () => receiver.received.some((r) => r.headers['webhook-id'] === test.body.data.event_id));
    assert.equal(receiver.of(done.eventId).length, 4);
    receiver.respond = previous;
  });

  // Time is read from the row (the attempt's time and the next one's), never waited for: 429 with delta-seconds,
  // 503 with an HTTP date, both far beyond the schedule's first 5-second retry.
  for (const [status, retryAfter, expectedMs] of [
    [429, () => '3600', 3_600_000],
    [503, () => new Date(Date.now() + 2 * 3_600_000).toUTCString(), 2 * 3_600_000],
  ] as const) {
    it(`honours Retry-After on ${status}`, async () => {
      const path = `/busy-${randomUUID()}`;
      const previous = receiver.respond;
      receiver.respond = (r) => (r.path === path ? { status, headers: { 'retry-after': retryAfter() } } : previous(r));
      const created = await subscribe({ target_url: `${receiver.url}${path}`, event_types: ['subscriber.added'] });
      const test = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: ws.key });
      const row = await eventually(async () => {
        const [r] = await db().select().from(webhookDeliveries).where(eq(webhookDeliveries.id, test.body.data.id));
        return r && r.attempts === 1 ? r : null;
      });
      assert.equal(row.responseStatus, status);
      assert.equal(row.status, 'pending');
      const delay = row.nextAttemptAt!.getTime() - row.lastAttemptAt!.getTime();
      // An HTTP date has whole seconds: up to one second less.
      assert.ok(delay >= expectedMs - 1010, `retried after ${delay} ms`);
      assert.ok(delay <= expectedMs + 60_000, `retried after ${delay} ms`);
      receiver.respond = previous;
    });
  }

  it('a receiver that holds its requests gets at most WEBHOOK_ENDPOINT_CONCURRENCY at once and never holds back another subscription', async () => {
    const book = await insertBook(svc, ws.id, { name: 'Isolation book' });
    const stuck = `/stuck-${randomUUID()}`;
    const quick = `/quick-${randomUUID()}`;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === stuck ? { status: 200, body: 'late', until: gate } : previous(r));
    const filters = [{ type: 'book', value: book.randomId }];
    await subscribe({ target_url: `${receiver.url}${stuck}`, event_types: ['subscriber.added'], filters });
    await subscribe({ target_url: `${receiver.url}${quick}`, event_types: ['subscriber.added'], filters });
    const events = 25;
    for (let i = 0; i < events; i++) await addSubscriber(book.randomId, `isolation-${i}@example.com`);
    // Every event reaches the quick receiver while the other one holds every request it got.
    await eventually(async () => new Set(receiver.received.filter((r) => r.path === quick).map((r) => r.headers['webhook-id'])).size === events);
    assert.ok(receiver.received.some((r) => r.path === stuck), 'the held receiver was called');
    // Its window (WEBHOOK_ENDPOINT_CONCURRENCY, 10 by default) never grew: it answered nothing fast.
    assert.ok(receiver.maxOpen(stuck) <= 10, `${receiver.maxOpen(stuck)} requests open at once`);
    release();
    await eventually(async () => new Set(receiver.received.filter((r) => r.path === stuck).map((r) => r.headers['webhook-id'])).size === events);
    assert.ok(receiver.maxOpen(stuck) <= 10, `${receiver.maxOpen(stuck)} requests open at once`);
    receiver.respond = previous;
  });

  it('deactivates on 410 Gone with the reason; enable and redeliver bring it back', async () => {
    const path = `/gone-${randomUUID()}`;
    let gone = true;
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === path && gone ? { status: 410, body: 'gone' } : previous(r));
    const created = await subscribe({ target_url: `${receiver.url}${path}`, event_types: ['flipbook.updated'] });
    const test = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: ws.key });
    const sub = await eventually(async () => {
      const res = await svc.request('GET', `/v1/webhook-subscriptions/${created.id}`, { key: ws.key });
      return res.body.data.is_active === false ? res.body.data : null;
    });
    assert.match(sub.deactivated_reason, /410/);
    const [delivery] = await deliveriesOf(created.id);
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.response_status, 410);
    assert.equal(receiver.received.filter((r) => r.path === path).length, 1, 'not retried');

    assert.equal((await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/deliveries/${test.body.data.id}/redeliver`, { key: ws.key })).status, 409);
    gone = false;
    const enabled = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/enable`, { key: ws.key });
    assert.equal(enabled.status, 200);
    assert.equal(enabled.body.data.is_active, true);
    assert.equal(enabled.body.data.deactivated_reason, null);
    const again = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/deliveries/${test.body.data.id}/redeliver`, { key: ws.key });
    assert.equal(again.status, 202, again.text);
    const redelivered = await eventually(async () => (await deliveriesOf(created.id)).find((d) => d.status === 'succeeded'));
    assert.equal(redelivered.attempts, 2);
    const requests = receiver.received.filter((r) => r.path === path);
    assert.equal(requests.length, 2);
    assert.equal(requests[0]!.headers['webhook-id'], requests[1]!.headers['webhook-id']);
  });

  it('deactivates a subscription whose every attempt failed for five days', async () => {
    const path = `/down-${randomUUID()}`;
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === path ? { status: 503 } : previous(r));
    const created = await subscribe({ target_url: `${receiver.url}${path}`, event_types: ['flipbook.updated'] });
    await db().update(webhookSubscriptions).set({ failingSince: new Date(Date.now() - 5 * 24 * 3600_000 - 60_000) }).where(eq(webhookSubscriptions.id, created.id));
    await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: ws.key });
    const sub = await eventually(async () => {
      const res = await svc.request('GET', `/v1/webhook-subscriptions/${created.id}`, { key: ws.key });
      return res.body.data.is_active === false ? res.body.data : null;
    });
    assert.match(sub.deactivated_reason, /five days/);
    const [delivery] = await deliveriesOf(created.id);
    assert.equal(delivery.status, 'failed');
    receiver.respond = previous;
  });

  it('delivers reader events only to subscriptions whose book or tracked link filter matches', async () => {
    const bookA = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4 });
    const bookB = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4 });
    const link = await svc.request('POST', `/v1/books/${bookB.randomId}/tracked-links`, { key: ws.key, body: { name: 'Mail', slug: 'mail' } });
    assert.equal(link.status, 201, link.text);
    const byBook = await subscribe({ target_url: `${receiver.url}/by-book`, event_types: ['link_clicked'], filters: [{ type: 'book', value: bookA.randomId }] });
    const byLink = await subscribe({ target_url: `${receiver.url}/by-link`, event_types: [{ value: 'link_clicked' }], filters: [{ type: 'tracked_link', value: 'mail', book_id: bookB.randomId }] });
    assert.deepEqual(byLink.filters, [{ type: 'tracked_link', value: 'mail', book_id: bookB.randomId, label: 'Mail' }]);
    // Re-submitting the filters as shown keeps them.
    const resubmitted = await svc.request('PUT', `/v1/webhook-subscriptions/${byLink.id}`, { key: ws.key, body: { filters: byLink.filters, event_types: byLink.event_types } });
    assert.deepEqual(resubmitted.body.data.filters, byLink.filters);

    const sendEvents = async (bookId: string, tl?: string) => {
      const res = await fetch(`${svc.url}/read/${bookId}/events`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA, 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 200) + 1}` },
        body: JSON.stringify({ session_id: randomUUID(), events: [
          { seq: 0, type: 'session_started' },
          { seq: 1, type: 'link_clicked', page: 1, metadata: { url: `https://example.com/${bookId}/${tl ?? 'direct'}` } },
        ], context: tl ? { tl } : {} }),
      });
      assert.equal(res.status, 200, await res.text());
    };
    await sendEvents(bookA.randomId);
    await sendEvents(bookB.randomId);
    await sendEvents(bookB.randomId, 'mail');

    const urlOf = (r: { body: string }) => JSON.parse(r.body).data.metadata[0].url as string;
    await eventually(async () => receiver.received.some((r) => r.path === '/by-book') && receiver.received.some((r) => r.path === '/by-link'));
    // Give the relay a full pass after the last event before asserting what did not arrive.
    await eventually(async () => (await deliveriesOf(byLink.id)).every((d) => d.status === 'succeeded') && (await deliveriesOf(byBook.id)).every((d) => d.status === 'succeeded'));
    const toBook = receiver.received.filter((r) => r.path === '/by-book');
    const toLink = receiver.received.filter((r) => r.path === '/by-link');
    assert.deepEqual(toBook.map(urlOf), [`https://example.com/${bookA.randomId}/direct`]);
    assert.deepEqual(toLink.map(urlOf), [`https://example.com/${bookB.randomId}/mail`]);
    const payload = verify(byLink.signing_secret, toLink[0]!) as any;
    assert.equal(payload.type, 'link_clicked');
    assert.equal(payload.data.book_id, bookB.randomId);
    assert.equal(payload.data.tracked_link_id, link.body.data.id);
    assert.equal(payload.data.source_type, 'tracked_link');

    const samples = await svc.request('GET', '/v1/webhook-subscriptions/sample-events', { key: ws.key, query: { event_types: 'link_clicked,flipbook.deleted' } });
    assert.equal(samples.status, 200);
    assert.ok(samples.body.data.some((e: any) => e.type === 'link_clicked' && e.data.book_id === bookB.randomId));
    assert.deepEqual(samples.body.meta.examples, ['flipbook.deleted']);
  });

  it('formats Slack deliveries as { text, blocks }', async () => {
    const created = await subscribe({ target_url: `${receiver.url}/slack`, provider: 'slack', event_types: ['subscriber.added'] });
    const test = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: ws.key });
    const request = await eventually(async () => receiver.of(test.body.data.event_id)[0]);
    const body = verify(created.signing_secret, request) as any;
    assert.equal(typeof body.text, 'string');
    assert.ok(Array.isArray(body.blocks));
    assert.match(body.text, /Access list entry added/);
  });

  it('rotates the secret: both signatures for a day, the new one verifies', async () => {
    const created = await subscribe({ target_url: `${receiver.url}/rotate`, event_types: ['subscriber.added'] });
    const rotated = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/rotate-secret`, { key: ws.key });
    assert.equal(rotated.status, 200);
    const secret = rotated.body.data.signing_secret as string;
    assert.notEqual(secret, created.signing_secret);
    const test = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: ws.key });
    const request = await eventually(async () => receiver.of(test.body.data.event_id)[0]);
    assert.equal(request.headers['webhook-signature']!.split(' ').length, 2);
    verify(secret, request);
    verify(created.signing_secret, request);
  });

  it('deleting keeps the delivery history, listable through the id', async () => {
    const created = await subscribe({ target_url: `${receiver.url}/deleted`, event_types: ['subscriber.added'] });
    const test = await svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: ws.key });
    await eventually(async () => receiver.of(test.body.data.event_id)[0]);
    const deleted = await svc.request('DELETE', `/v1/webhook-subscriptions/${created.id}`, { key: ws.key });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.data.deleted, true);
    assert.equal((await svc.request('GET', `/v1/webhook-subscriptions/${created.id}`, { key: ws.key })).status, 404);
    const history = await svc.request('GET', `/v1/webhook-subscriptions/${created.id}/deliveries`, { key: ws.key });
    assert.equal(history.status, 200);
    assert.equal(history.body.meta.subscription_deleted, true);
    assert.equal(history.body.data.length, 1);
  });

  it('POST /webhooks sends a sample: 202 when received, 502 with the status otherwise, no redirect followed', async () => {
    const ok = await svc.request('POST', '/v1/webhooks', { key: ws.key, body: { event: 'flipbook.created', url: `${receiver.url}/sample` } });
    assert.equal(ok.status, 202, ok.text);
    assert.equal(ok.body.data.event, 'flipbook.created');
    assert.equal(ok.body.data.payload.type, 'flipbook.created');
    const got = receiver.received.filter((r) => r.path === '/sample').at(-1)!;
    assert.deepEqual(JSON.parse(got.body), ok.body.data.payload);

    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === '/sample-fail' ? { status: 500 } : r.path === '/redirect' ? { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } } : previous(r));
    const failed = await svc.request('POST', '/v1/webhooks', { key: ws.key, body: { event: 'subscriber.added', url: `${receiver.url}/sample-fail`, payload: [{ a: 1 }] } });
    assert.equal(failed.status, 502, failed.text);
    assert.equal(failed.body.error.type, 'BadGatewayException');
    assert.deepEqual(failed.body.error.details.response_status, ['500']);
    const redirected = await svc.request('POST', '/v1/webhooks', { key: ws.key, body: { event: 'flipbook.updated', url: `${receiver.url}/redirect` } });
    assert.equal(redirected.status, 502);
    assert.deepEqual(redirected.body.error.details.response_status, ['302']);
    assert.match(redirected.body.error.message, /redirect/);
    receiver.respond = previous;
  });
});

describe('webhook target safety without an allow-list', () => {
  let svc: TestService;
  let ws: { key: string };
  before(async () => {
    svc = await startService({ worker: false });
    ws = await svc.workspace();
  });
  after(() => svc?.stop());

  it('refuses private, loopback, link-local, IPv6 loopback and mapped addresses, names resolving to them, plain http and credentials', async () => {
    for (const url of [
      'https://10.0.0.5/hook', 'https://192.168.1.20/hook', 'https://172.16.0.1/', 'https://127.0.0.1:8443/', 'https://169.254.169.254/latest/meta-data/',
      'https://localhost/hook', 'https://[::1]/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://[::ffff:a9fe:a9fe]/', 'https://[fd00::1]/', 'https://0.0.0.0/',
      'http://hooks.example.com/', 'https://user:pass@hooks.example.com/', 'ftp://hooks.example.com/',
    ]) {
      const res = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'x', target_url: url, event_types: ['link_clicked'] } });
      assert.equal(res.status, 422, `${url}: ${res.text}`);
      assert.ok(res.body.error.details.target_url, url);
      const sample = await svc.request('POST', '/v1/webhooks', { key: ws.key, body: { event: 'flipbook.created', url } });
      assert.equal(sample.status, 422, `${url}: ${sample.text}`);
    }
  });
});
