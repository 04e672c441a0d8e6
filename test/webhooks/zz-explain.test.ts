import { it } from 'node:test';
import { sql } from 'drizzle-orm';
import { webhookDeliveries, webhookSubscriptions } from '../../src/modules/webhooks/webhooks.tables.ts';
import { startService } from '../helpers.ts';
it('explain', async () => {
  const svc = await startService({ worker: false });
  const ws = await svc.workspace();
  const db = svc.runtime.database.db;
  const [sub] = await db.insert(webhookSubscriptions).values({ workspaceId: ws.id, name: 'x', provider: 'standard', targetUrl: 'https://example.com/', eventTypes: ['link_clicked'], secretEncrypted: 'x' }).returning();
  const now = new Date();
  for (let i = 0; i < 10000; i += 1000) {
    await db.insert(webhookDeliveries).values(Array.from({ length: 1000 }, (_, j) => ({ workspaceId: ws.id, subscriptionId: sub!.id, eventId: `e${i + j}`, eventType: 'x', payload: 'x'.repeat(500), status: 'pending', nextAttemptAt: now })));
  }
  await db.execute(sql`analyze`);
  const json = JSON.stringify([{ id: 5, status: 'succeeded' }]);
  for (const q of [
    sql`explain analyze update webhook_deliveries d set status = v."status", attempts = d.attempts + 1 from jsonb_to_recordset(${json}::jsonb) as v("id" bigint, "status" text) where d.id = v."id"`,
    sql`explain analyze with due as (select d.id, d.subscription_id, d.next_attempt_at from webhook_deliveries d where d.status = 'pending' and d.next_attempt_at <= ${new Date()} and (d.locked_until is null or d.locked_until < ${new Date()}) and not (d.subscription_id = any(${'{}'}::int[])) order by d.next_attempt_at limit 500 for update of d skip locked), ranked as (select id, row_number() over (partition by subscription_id order by next_attempt_at, id) as rank from due) update webhook_deliveries d set locked_until = ${new Date()} from ranked r, webhook_subscriptions s where d.id = r.id and r.rank <= 40 and s.id = d.subscription_id and s.is_active and s.deleted_at is null returning d.id`,
  ]) {
    const t = Date.now();
    const res = await db.execute(q) as any;
    console.log(Date.now() - t, 'ms');
    console.log(res.rows.map((x: any) => x['QUERY PLAN']).join('\n'));
  }
  await svc.stop();
});
