/**
 * The Shopify connector: the operator's Shopify app calls these operations
 * for the shop's workspace.
 *
 * How the connector is identified (spec part 5, point 10): both of
 *  1. a workspace API key the operator made the connector's
 *     (`flipbook connector grant <keyId> [--shop-domain …]`; keys rotated
 *     from it stay the connector's), else 403;
 *  2. X-Shopify-Hmac-Sha256: base64 HMAC-SHA256 of the raw request body with
 *     the app's client secret (SHOPIFY_CLIENT_SECRET), compared in constant
 *     time, else 401. Without a configured secret the operations answer 403.
 *
 * Webhook deliveries are deduplicated on X-Shopify-Webhook-Id (or a SHA-256
 * of topic and payload when it is absent): a repeated delivery answers the
 * first result with `replayed: true` and does nothing again. The delivery
 * record, the action and its audit entry are one transaction.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import type { WorkspacesService } from '../workspaces/workspaces.service.ts';
import type { AuthContext } from '../../platform/auth/auth-context.ts';
import { slugify } from '../workspaces/workspaces.service.ts';
import type { CatalogsService } from '../catalogs/catalogs.service.ts';
import { catalogItems } from '../catalogs/catalogs.tables.ts';
import { connectorCredentials, connectorEvents, type ConnectorEventRow } from './connector.tables.ts';
import { collectCustomerData, redactCustomer } from './customer-data.ts';

export const PLATFORM = 'shopify';
export const WEBHOOK_TOPICS = ['customers/data_request', 'customers/redact', 'shop/redact'] as const;
export type WebhookTopic = (typeof WEBHOOK_TOPICS)[number];

export interface WebhookInput {
  topic: WebhookTopic;
  shopDomain: string;
  payload: {
    shop_domain: string;
    shop_id: number;
    customer?: { email?: string; id?: number };
    data_request?: { id?: number };
    orders_to_redact?: number[];
    orders_requested?: number[];
  };
}

export interface WebhookResult {
  action: string;
  counts: Record<string, number>;
  replayed: boolean;
  status: string;
}

/** Canonical JSON (sorted keys), so the same payload hashes the same whatever its key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** True when `signature` (base64) is the HMAC-SHA256 of `body` with `secret`; constant time. */
export function verifyShopifyHmac(secret: string, body: Buffer, signature: string | undefined): boolean {
  if (!signature) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(signature.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function toResult(row: ConnectorEventRow, replayed: boolean): WebhookResult {
  return { action: row.action, counts: row.counts, replayed, status: row.status };
}

export class ConnectorService {
  private readonly db: Db;
  private readonly queue: JobQueue;
  private readonly workspaces: WorkspacesService;
  private readonly catalogs: CatalogsService;
  private readonly clientSecret: string;

  constructor(deps: { db: Db; queue: JobQueue; workspaces: WorkspacesService; catalogs: CatalogsService; clientSecret: string }) {
    this.db = deps.db;
    this.queue = deps.queue;
    this.workspaces = deps.workspaces;
    this.catalogs = deps.catalogs;
    this.clientSecret = deps.clientSecret;
  }

  /**
   * The checks every connector call passes, in order: the connector is
   * configured (403), the key is the connector's and may act for the shop
   * (403), the body carries the app's HMAC (401).
   */
  async authorise(auth: AuthContext, rawBody: Buffer, signature: string | undefined, shopDomain?: string): Promise<void> {
    if (!this.clientSecret) throw ERRORS.forbidden('The Shopify connector is not configured on this server (SHOPIFY_CLIENT_SECRET).');
    const credential = auth.keyId === null ? null : await this.credentialOf(auth.keyId);
    if (!credential) throw ERRORS.forbidden('Only the configured Shopify connector may call this operation; this API key is not the connector\'s.');
    if (shopDomain && credential.shopDomain && credential.shopDomain !== shopDomain.toLowerCase()) {
      throw ERRORS.forbidden(`This connector key acts for ${credential.shopDomain}, not ${shopDomain}.`);
    }
    if (!verifyShopifyHmac(this.clientSecret, rawBody, signature)) {
      throw ERRORS.unauthenticated(signature ? 'X-Shopify-Hmac-Sha256 does not match the body.' : 'X-Shopify-Hmac-Sha256 is missing: sign the raw body with the app\'s client secret.');
    }
  }

  /** The credential of the key or of a key it was rotated from. */
  private async credentialOf(keyId: number) {
    const result = await this.db.execute(sql`
      with recursive lineage(id, rotated_from_id) as (
        select id, rotated_from_id from api_keys where id = ${keyId}
        union all
        select k.id, k.rotated_from_id from api_keys k join lineage l on k.id = l.rotated_from_id
      )
      select c.shop_domain from connector_credentials c where c.platform = ${PLATFORM} and c.api_key_id in (select id from lineage) limit 1`);
    const row = (result as unknown as { rows: { shop_domain: string | null }[] }).rows[0];
    return row ? { shopDomain: row.shop_domain } : null;
  }

  async handleWebhook(auth: AuthContext, input: WebhookInput, webhookId: string | undefined): Promise<WebhookResult> {
    const shop = input.shopDomain.toLowerCase();
    if (input.payload.shop_domain.toLowerCase() !== shop) {
      throw ERRORS.validation({ 'payload.shop_domain': ['Must be the same shop as shopDomain.'] });
    }
    const email = input.payload.customer?.email;
    if (input.topic !== 'shop/redact' && !email) {
      throw ERRORS.validation({ 'payload.customer.email': ['customers/* topics need the customer\'s e-mail address: it is how the workspace knows readers.'] });
    }
    const deliveryId = webhookId?.trim() || `sha256:${createHash('sha256').update(`${input.topic}\n${canonical(input.payload)}`).digest('hex')}`;
    const workspaceId = auth.workspaceId;
    return this.db.transaction(async (tx) => {
      const [created] = await tx.insert(connectorEvents).values({
        workspaceId, platform: PLATFORM, kind: 'webhook', deliveryId, topic: input.topic, shopDomain: shop, shopId: input.payload.shop_id,
        apiKeyId: auth.keyId, action: 'pending', status: 'processing',
      }).onConflictDoNothing().returning();
      if (!created) {
        const [first] = await tx.select().from(connectorEvents)
          .where(and(eq(connectorEvents.workspaceId, workspaceId), eq(connectorEvents.platform, PLATFORM), eq(connectorEvents.deliveryId, deliveryId)));
        return toResult(first!, true);
      }
      let outcome: { action: string; status: string; counts: Record<string, number>; details: Record<string, unknown> | null; finished: boolean };
      if (input.topic === 'customers/redact') {
        const counts = await redactCustomer(tx, workspaceId, email!);
        outcome = {
          action: 'customer_data_redacted', status: 'completed', counts, finished: true,
          details: { customer_id: input.payload.customer?.id ?? null, orders_to_redact: input.payload.orders_to_redact ?? [] },
        };
      } else if (input.topic === 'customers/data_request') {
        const { data, counts } = await collectCustomerData(tx, workspaceId, email!);
        outcome = {
          action: 'customer_data_recorded', status: 'recorded', counts, finished: true,
          details: { data_request_id: input.payload.data_request?.id ?? null, customer_id: input.payload.customer?.id ?? null, generated_at: new Date().toISOString(), data },
        };
      } else {
        const ids = await this.catalogs.catalogIdsOfSource(tx, workspaceId, 'shopify');
        const [{ n } = { n: 0 }] = ids.length
          ? await tx.select({ n: sql<number>`count(*)::int` }).from(catalogItems).where(inArray(catalogItems.catalogId, ids))
          : [{ n: 0 }];
        await this.queue.send('connector.shop-redact', { eventId: created.id }, { tx });
        outcome = { action: 'shop_data_deletion_scheduled', status: 'scheduled', counts: { catalogs: ids.length, catalog_items: n }, details: { catalog_ids: ids }, finished: false };
      }
      const [row] = await tx.update(connectorEvents).set({
        action: outcome.action, status: outcome.status, counts: outcome.counts, details: outcome.details, finishedAt: outcome.finished ? new Date() : null,
      }).where(eq(connectorEvents.id, created.id)).returning();
      return toResult(row!, false);
    });
  }

  /** The shop/redact job: deletes the workspace's Shopify catalogs (items and sync jobs with them). */
  async runShopRedaction(eventId: number): Promise<{ outcome: string }> {
    const [event] = await this.db.select().from(connectorEvents).where(eq(connectorEvents.id, eventId));
    if (!event || event.finishedAt) return { outcome: 'skipped' };
    await this.db.transaction(async (tx) => {
      const ids = await this.catalogs.catalogIdsOfSource(tx, event.workspaceId, 'shopify');
      const removed = await this.catalogs.deleteCatalogs(tx, event.workspaceId, ids);
      await tx.update(connectorEvents).set({
        status: 'completed', finishedAt: new Date(), details: { ...event.details, deleted: { catalogs: removed.catalogs, catalog_items: removed.items } },
      }).where(eq(connectorEvents.id, eventId));
    });
    return { outcome: 'finished' };
  }

  /** Replaces the generated signup name once; 422 when already renamed or the slug is taken. */
  async renameWorkspace(auth: AuthContext, input: { workspace_name: string; workspace_slug?: string }) {
    const name = input.workspace_name.trim();
    if (!name) throw ERRORS.validation({ workspace_name: ['The name must not be blank.'] });
    const slug = input.workspace_slug?.trim() || slugify(name);
    const renamed = await this.workspaces.renameOnce(auth.workspaceId, name, slug);
    if (!renamed) throw ERRORS.validation({ workspace_name: ['The workspace was already named through the connector; its name can be set once.'] });
    await this.db.insert(connectorEvents).values({
      workspaceId: auth.workspaceId, platform: PLATFORM, kind: 'workspace_name', apiKeyId: auth.keyId, action: 'workspace_renamed', status: 'completed',
      details: { from: { name: renamed.before.name, slug: renamed.before.slug }, to: { name, slug } }, finishedAt: new Date(),
    });
    const w = renamed.after;
    return {
      data: { workspace: { can_rename: w.canRename, id: w.id, name: w.name, slug: w.slug } },
      meta: { previous_name: renamed.before.name, previous_slug: renamed.before.slug },
    };
  }

  // --- operator commands ----------------------------------------------------------

  /** Makes an API key the connector's (for one shop, or any shop of its workspace). */
  async grant(keyId: number, shopDomain?: string) {
    const key = await this.workspaces.getKey(keyId);
    if (key.revokedAt) throw ERRORS.conflict('The key is revoked.');
    const [row] = await this.db.insert(connectorCredentials)
      .values({ workspaceId: key.workspaceId, apiKeyId: key.id, platform: PLATFORM, shopDomain: shopDomain?.toLowerCase() ?? null })
      .onConflictDoUpdate({ target: connectorCredentials.apiKeyId, set: { shopDomain: shopDomain?.toLowerCase() ?? null } })
      .returning();
    return { key_id: row!.apiKeyId, workspace_id: row!.workspaceId, platform: row!.platform, shop_domain: row!.shopDomain };
  }

  async revokeGrant(keyId: number) {
    const removed = await this.db.delete(connectorCredentials).where(eq(connectorCredentials.apiKeyId, keyId)).returning();
    if (removed.length === 0) throw ERRORS.notFound('Connector credential');
    return { key_id: keyId, revoked: true };
  }

  /** The connector's audit log of a workspace, newest first (data requests carry what was assembled). */
  async events(workspaceId: number, limit = 50) {
    const rows = await this.db.select().from(connectorEvents).where(eq(connectorEvents.workspaceId, workspaceId)).orderBy(desc(connectorEvents.id)).limit(limit);
    return rows.map((r) => ({
      id: r.id, kind: r.kind, topic: r.topic, delivery_id: r.deliveryId, shop_domain: r.shopDomain, action: r.action, status: r.status,
      counts: r.counts, details: r.details, created_at: r.createdAt.toISOString(), finished_at: r.finishedAt?.toISOString() ?? null,
    }));
  }
}
