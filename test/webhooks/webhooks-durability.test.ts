/**
 * Webhooks across a worker restart, and secrets in the logs:
 *  - deliveries waiting for a retry when the service stops are all sent after
 *    it starts again on the same database, each exactly once;
 *  - creating, rotating and using a subscription never writes its secret to
 *    the log (captured through the service's own logger at level trace).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { webhookDeliveries, webhookRelayPositions } from '../../src/modules/webhooks/webhooks.tables.ts';
import type { DatabaseTarget } from '../../src/platform/db/database.ts';
import { eventually, scratchPostgres, startService, usingPostgres, type TestService } from '../helpers.ts';
import { startReceiver, verify } from './receiver.ts';
import { LogCapture } from '../security/log-capture.ts';

describe('webhook durability', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('a restart of the worker mid-retry loses no delivery and duplicates none', async () => {
    let phase: 'failing' | 'healthy' = 'failing';
    // 503 with Retry-After an hour: each delivery waits for its retry past the restart, however long creating them takes
    // under load (with the schedule's 5 s the first ones could be retried before the last one was tried once).
    const receiver = await startReceiver(() => (phase === 'failing' ? { status: 503, body: 'down', headers: { 'retry-after': '3600' } } : { status: 200, body: 'ok' }));
    cleanups.push(() => receiver.close());
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-webhooks-restart-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    let database: DatabaseTarget = { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') };
    if (usingPostgres) {
      const scratch = await scratchPostgres();
      cleanups.push(scratch.drop);
      database = { kind: 'postgres', url: scratch.url, poolSize: 5 };
    }
    const env = { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', SECRET_KEY: 'a-fixed-service-secret-for-the-restart-test-0123456789' };
    let svc: TestService = await startService({ env, dataDir, database });
    const ws = await svc.workspace();
    const created = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'Restart', target_url: `${receiver.url}/r`, event_types: ['subscriber.added'] } });
    assert.equal(created.status, 201, created.text);
    const subscription = created.body.data;
    const events = 20;
    for (let i = 0; i < events; i++) {
      const res = await svc.request('POST', `/v1/webhook-subscriptions/${subscription.id}/test`, { key: ws.key });
      assert.equal(res.status, 202);
    }
    // Every delivery failed once and waits for its retry (an hour away).
    await eventually(async () => {
      const rows = await svc.runtime.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, subscription.id));
      return rows.length === events && rows.every((r) => r.attempts === 1 && r.status === 'pending');
    });
    await svc.stop();

    phase = 'healthy';
    svc = await startService({ env, dataDir, database });
    cleanups.push(() => svc.stop());
    const db = svc.runtime.database.db;
    await db.update(webhookDeliveries).set({ nextAttemptAt: new Date(Date.now() - 1) }).where(eq(webhookDeliveries.subscriptionId, subscription.id));
    await eventually(async () => {
      const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, subscription.id));
      return rows.every((r) => r.status === 'succeeded');
    });
    // Time moves on: nothing is sent again.
    await db.update(webhookDeliveries).set({ nextAttemptAt: new Date(Date.now() - 1) }).where(eq(webhookDeliveries.subscriptionId, subscription.id));
    const after = await svc.request('POST', `/v1/webhook-subscriptions/${subscription.id}/test`, { key: ws.key });
    await eventually(async () => receiver.of(after.body.data.event_id).length > 0);

    const ids = new Set((await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, subscription.id))).map((r) => r.eventId));
    assert.equal(ids.size, events + 1);
    for (const id of ids) {
      const requests = receiver.of(id);
      assert.equal(requests.length, id === after.body.data.event_id ? 1 : 2, `${id}: one failed and one successful request`);
      for (const r of requests) verify(subscription.signing_secret, r);
    }
  });

  it('never writes a signing secret to the log', async () => {
    // The service's own logger and serializers, at level trace (what production writes, and more).
    const logs = new LogCapture();
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, logStream: logs.stream });
    cleanups.push(() => svc.stop());
    const ws = await svc.workspace();
    const created = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'Logs', target_url: `${receiver.url}/logs`, event_types: ['subscriber.added'] } });
    const rotated = await svc.request('POST', `/v1/webhook-subscriptions/${created.body.data.id}/rotate-secret`, { key: ws.key });
    const test = await svc.request('POST', `/v1/webhook-subscriptions/${created.body.data.id}/test`, { key: ws.key });
    await eventually(async () => receiver.of(test.body.data.event_id)[0]);
    await svc.request('GET', `/v1/webhook-subscriptions/${created.body.data.id}/deliveries`, { key: ws.key });
    await svc.request('PUT', `/v1/webhook-subscriptions/${created.body.data.id}`, { key: ws.key, body: { name: 'Logs 2' } });
    assert.ok(logs.text.includes('/v1/webhook-subscriptions'), 'the requests were logged');
    for (const secret of [created.body.data.signing_secret as string, rotated.body.data.signing_secret as string]) {
      assert.ok(secret.startsWith('whsec_'));
      logs.assertAbsent([secret.slice(6), Buffer.from(secret.slice(6), 'base64').toString('hex')], 'webhook signing secrets');
    }
  });

  it('delivers an event whose transaction commits after a later one (an id gap), and lets rolled-back ids go', { skip: usingPostgres ? false : 'needs concurrent transactions: PostgreSQL only (DATABASE_URL)' }, async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
    cleanups.push(() => svc.stop());
    const ws = await svc.workspace();
    const created = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'Gaps', target_url: `${receiver.url}/gaps`, event_types: ['flipbook.updated'] } });
    assert.equal(created.status, 201, created.text);
    const url = (svc.runtime.database as { url?: string }).url!;
    const slow = new pg.Client({ connectionString: url });
    const other = new pg.Client({ connectionString: url });
    await slow.connect();
    await other.connect();
    cleanups.push(async () => { await slow.end(); await other.end(); });
    const insert = (client: pg.Client, eventId: string) =>
      client.query(`insert into domain_events (event_id, workspace_id, type, payload) values ($1, $2, 'flipbook.updated', '{"book_id":"gap"}')`, [eventId, ws.id]);

    await slow.query('begin');
    await insert(slow, 'evt_gap_early');
    await insert(other, 'evt_gap_late');
    await eventually(async () => receiver.of('evt_gap_late').length > 0);
    await slow.query('commit');
    await eventually(async () => receiver.of('evt_gap_early').length > 0);

    await slow.query('begin');
    await insert(slow, 'evt_gap_rolled_back');
    await slow.query('rollback');
    await insert(other, 'evt_gap_after');
    await eventually(async () => receiver.of('evt_gap_after').length > 0);
    await eventually(async () => {
      const [position] = await svc.runtime.database.db.select().from(webhookRelayPositions).where(eq(webhookRelayPositions.stream, 'domain'));
      return position && position.gaps.length === 0;
    });
    assert.equal(receiver.of('evt_gap_rolled_back').length, 0);
    assert.equal(receiver.of('evt_gap_early').length, 1);
    assert.equal(receiver.of('evt_gap_late').length, 1);
  });
});
