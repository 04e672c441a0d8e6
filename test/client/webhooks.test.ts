/**
 * verifyWebhook(): against signatures made by the `standardwebhooks` package
 * (the reference), and against real deliveries the service signed and sent
 * to a receiver on 127.0.0.1, before and after a secret rotation (two
 * signatures). Forgeries, other secrets and old timestamps are refused.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createFlipbookClient, unwrap, verifyWebhook, WebhookVerificationError, type FlipbookClient, type WebhookEvent } from '@flipbook/client';
import { insertBook } from '../factories.ts';
import { eventually, startService, type TestService } from '../helpers.ts';
import { startReceiver, verify, type Receiver, type Received } from '../webhooks/receiver.ts';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

describe('verifyWebhook with standardwebhooks signatures', () => {
  const secret = newSecret();
  const payload = JSON.stringify({ type: 'subscriber.added', timestamp: '2026-03-01T09:30:00.000Z', data: { id: 1, email: 'ann@example.com', naïve: '✓' } });
  const signed = (at = new Date(), body = payload, id = 'evt_123') => ({ 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) });

  it('accepts a genuine message given as text, bytes, Headers or a header object of any case, and returns the payload', async () => {
    const headers = signed();
    const expected = JSON.parse(payload);
    assert.deepEqual(await verifyWebhook(headers, payload, secret), expected);
    assert.deepEqual(await verifyWebhook(new Headers(headers), new TextEncoder().encode(payload), secret), expected);
    assert.deepEqual(await verifyWebhook(headers, Buffer.from(payload), secret), expected);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.deepEqual(await verifyWebhook(upper, payload, secret), expected);
    // The key without its whsec_ prefix, as standardwebhooks also accepts it.
    assert.deepEqual(await verifyWebhook(headers, payload, secret.slice('whsec_'.length)), expected);
  });

  it('accepts any one matching signature of several, skipping other versions', async () => {
    const headers = signed();
    const other = new Webhook(newSecret()).sign('evt_123', new Date(Number(headers['webhook-timestamp']) * 1000), payload);
    const many = { ...headers, 'webhook-signature': `v2,abc ${other} ${headers['webhook-signature']}` };
    assert.deepEqual(await verifyWebhook(many, payload, secret), JSON.parse(payload));
  });

  it('refuses a changed body, id or timestamp, another secret, missing headers, and timestamps outside 5 minutes', async () => {
    const headers = signed();
    const refused = async (h: Record<string, string>, body = payload, key = secret, options = {}) =>
      assert.rejects(verifyWebhook(h, body, key, options), WebhookVerificationError);
    await refused(headers, payload.replace('ann@', 'eve@'));
    await refused(headers, `${payload} `);
    await refused({ ...headers, 'webhook-id': 'evt_124' });
    await refused({ ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) });
    await refused(headers, payload, newSecret());
    await refused({ ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') });
    await refused({ ...headers, 'webhook-signature': 'v1,not base64!' });
    await refused({ 'webhook-id': headers['webhook-id'], 'webhook-timestamp': headers['webhook-timestamp'] });

    const sixMinutesAgo = new Date(Date.now() - 6 * 60_000);
    const old = signed(sixMinutesAgo);
    await refused(old);
    await refused(signed(new Date(Date.now() + 6 * 60_000)));
    assert.throws(() => new Webhook(secret).verify(payload, old), 'standardwebhooks refuses it too');
    // The same message at the time it was signed, or with a wider tolerance, is genuine.
    assert.deepEqual(await verifyWebhook(old, payload, secret, { now: sixMinutesAgo }), JSON.parse(payload));
    assert.deepEqual(await verifyWebhook(old, payload, secret, { toleranceSeconds: 600 }), JSON.parse(payload));
  });
});

describe('verifyWebhook with deliveries the service signed', () => {
  let svc: TestService;
  let receiver: Receiver;
  let client: FlipbookClient;
  let bookId: string;

  before(async () => {
    svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_ENDPOINT_PER_MINUTE: 0 } });
    const ws = await svc.workspace();
    bookId = (await insertBook(svc, ws.id, { name: 'Hooked' })).randomId;
    client = createFlipbookClient({ baseUrl: svc.url, token: ws.key });
    receiver = await startReceiver();
  });
  after(async () => {
    await svc?.stop();
    await receiver?.close();
  });

  const delivered = (path: string, match: (body: { type: string; data: Record<string, unknown> }, request: Received) => boolean) =>
    eventually(async () => receiver.received.find((r) => r.path === path && match(JSON.parse(r.body), r)));

  it('verifies an event delivery and a test delivery, as standardwebhooks does, and refuses them tampered', async () => {
    const { data: subscription } = await unwrap(client.POST('/v1/webhook-subscriptions', { body: { name: 'Receiver', target_url: `${receiver.url}/events`, event_types: ['subscriber.added'] } }));
    await unwrap(client.POST('/v1/subscribers', { body: { book_id: bookId, email: 'reader@example.com' } }));
    const request = await delivered('/events', (b) => b.data.email === 'reader@example.com');

    const event = await verifyWebhook(request.headers, request.body, subscription.signing_secret);
    assert.deepEqual(event, verify(subscription.signing_secret, request));
    assert.equal(event.type, 'subscriber.added');
    if (event.type === 'subscriber.added') assert.equal(event.data.email, 'reader@example.com');

    await unwrap(client.POST('/v1/webhook-subscriptions/{subscription}/test', { params: { path: { subscription: subscription.id } } }));
    // The documented example of the subscription's first event type, under an evt_test_ id.
    const test = await delivered('/events', (_b, r) => r.headers['webhook-id']!.startsWith('evt_test_'));
    const testEvent: WebhookEvent = await verifyWebhook(test.headers, Buffer.from(test.body), subscription.signing_secret);
    assert.equal(testEvent.type, 'subscriber.added');
    assert.deepEqual(testEvent, verify(subscription.signing_secret, test));

    await assert.rejects(verifyWebhook(request.headers, request.body.replace('reader@', 'forger@'), subscription.signing_secret), WebhookVerificationError);
    await assert.rejects(verifyWebhook(test.headers, request.body, subscription.signing_secret), WebhookVerificationError, 'a body under another message\'s signature');
  });

  it('verifies with the new and the old secret for a day after a rotation, and with neither other secret', async () => {
    const { data: subscription } = await unwrap(client.POST('/v1/webhook-subscriptions', { body: { name: 'Rotating', target_url: `${receiver.url}/rotating`, event_types: ['subscriber.added'] } }));
    const { data: rotated } = await unwrap(client.POST('/v1/webhook-subscriptions/{subscription}/rotate-secret', { params: { path: { subscription: subscription.id } } }));
    assert.notEqual(rotated.signing_secret, subscription.signing_secret);
    await unwrap(client.POST('/v1/subscribers', { body: { book_id: bookId, email: 'rotated@example.com' } }));
    const request: Received = await delivered('/rotating', (b) => b.data.email === 'rotated@example.com');
    assert.equal(request.headers['webhook-signature']!.split(' ').length, 2);

    for (const secret of [rotated.signing_secret, subscription.signing_secret]) {
      const event = await verifyWebhook(request.headers, request.body, secret);
      assert.deepEqual(event, verify(secret, request));
    }
    await assert.rejects(verifyWebhook(request.headers, request.body, newSecret()), WebhookVerificationError);
  });
});
