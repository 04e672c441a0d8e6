/**
 * oidc-provider's storage on our database: one table (oauth_models) keyed by
 * model and id, the payload as jsonb. Every id but a client's is stored as
 * its SHA-256: for tokens and codes the id is the bearer value itself, so a
 * copy of the table holds nothing usable. Clients are the workspace's OAuth
 * apps (oauth_apps).
 */
import { createHash } from 'node:crypto';
import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Db } from '../../platform/db/database.ts';
import { oauthApps, oauthModels, type OAuthAppRow } from './oauth.tables.ts';

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** `<userId>:<workspaceId>`: an OAuth grant acts for one person in one workspace. */
export function parseAccountId(accountId: unknown): { userId: number; workspaceId: number } | null {
  if (typeof accountId !== 'string') return null;
  const match = /^(\d{1,9}):(\d{1,9})$/.exec(accountId);
  return match ? { userId: Number(match[1]), workspaceId: Number(match[2]) } : null;
}

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'];

/** An app as oidc-provider's client metadata. */
export function clientMetadata(app: OAuthAppRow): AdapterPayload {
  if (app.metadata) return { ...app.metadata, client_id: app.clientId, client_name: app.name, redirect_uris: app.redirectUris, token_endpoint_auth_method: 'none' };
  return {
    client_id: app.clientId,
    client_name: app.name,
    redirect_uris: app.redirectUris,
    // An app without redirect URIs (a command-line tool, a plugin) uses the device flow only.
    grant_types: app.redirectUris.length ? GRANT_TYPES : GRANT_TYPES.filter((t) => t !== 'authorization_code'),
    response_types: app.redirectUris.length ? ['code'] : [],
    id_token_signed_response_alg: 'ES256',
    token_endpoint_auth_method: app.public ? 'none' : 'client_secret_basic',
    // The hash stands as the secret: the provider's comparison hashes the presented one (OAuthService).
    ...(app.public || !app.secretHash ? {} : { client_secret: app.secretHash }),
  };
}

export function createAdapterClass(db: Db) {
  return class DrizzleAdapter implements Adapter {
    private readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    /** The stored id: the SHA-256 of the id, or the hash itself for a reference from findByUid/findByUserCode. */
    private key(id: string): string {
      return id.startsWith(HASHED_REF) ? id.slice(HASHED_REF.length) : sha256(id);
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      if (this.model === 'Client') {
        // Dynamic client registration (public clients only: the registration policy refuses the others).
        await db.insert(oauthApps).values({
          clientId: id, name: String(payload.client_name ?? 'Unnamed app').slice(0, 200),
          redirectUris: Array.isArray(payload.redirect_uris) ? payload.redirect_uris.map(String) : [],
          public: true, metadata: { ...payload },
        }).onConflictDoUpdate({ target: oauthApps.clientId, set: { metadata: { ...payload } } });
        return;
      }
      const { jti: _jti, ...stored } = payload;
      const account = parseAccountId(payload.accountId);
      const grantId = this.model === 'Grant' ? id : (typeof payload.grantId === 'string' ? payload.grantId : null);
      const values = {
        model: this.model,
        id: this.key(id),
        payload: stored as Record<string, unknown>,
        grantId,
        userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        clientId: typeof payload.clientId === 'string' ? payload.clientId : null,
        userId: account?.userId ?? null,
        workspaceId: account?.workspaceId ?? null,
        expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      };
      const { model: _m, id: _i, ...update } = values;
      await db.insert(oauthModels).values(values).onConflictDoUpdate({ target: [oauthModels.model, oauthModels.id], set: update });
    }

    private async findWhere(condition: ReturnType<typeof eq>, id?: string): Promise<AdapterPayload | undefined> {
      const [row] = await db.select().from(oauthModels)
        .where(and(eq(oauthModels.model, this.model), condition, or(isNull(oauthModels.expiresAt), gt(oauthModels.expiresAt, sql`now()`))))
        .limit(1);
      if (!row) return undefined;
      const payload = { ...row.payload } as AdapterPayload;
      if (id !== undefined) payload.jti = id;
      if (row.consumedAt) payload.consumed = Math.floor(row.consumedAt.getTime() / 1000);
      return payload;
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      // A presented value is never taken as a hash reference: that would let a stored hash stand in for the token.
      if (typeof id !== 'string' || id.length > 512 || id.startsWith(HASHED_REF)) return undefined;
      if (this.model === 'Client') {
        const [app] = await db.select().from(oauthApps).where(eq(oauthApps.clientId, id));
        return app ? clientMetadata(app) : undefined;
      }
      return this.findWhere(eq(oauthModels.id, this.key(id)), id);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const [row] = await db.select({ payload: oauthModels.payload }).from(oauthModels)
        .where(and(eq(oauthModels.model, this.model), eq(oauthModels.userCode, userCode), or(isNull(oauthModels.expiresAt), gt(oauthModels.expiresAt, sql`now()`))))
        .limit(1);
      // The id (the device code) is not stored: the caller needs it only to save the code again, which finds it by jti.
      if (!row) return undefined;
      return this.withStoredId(row.payload, eq(oauthModels.userCode, userCode));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const [row] = await db.select({ payload: oauthModels.payload }).from(oauthModels)
        .where(and(eq(oauthModels.model, this.model), eq(oauthModels.uid, uid), or(isNull(oauthModels.expiresAt), gt(oauthModels.expiresAt, sql`now()`))))
        .limit(1);
      if (!row) return undefined;
      return this.withStoredId(row.payload, eq(oauthModels.uid, uid));
    }

    /**
     * A payload found by a secondary index: its id is only stored hashed, so
     * it gets a reference `h:<hash>` that upsert/destroy/consume recognise.
     */
    private async withStoredId(payload: Record<string, unknown>, condition: ReturnType<typeof eq>): Promise<AdapterPayload> {
      const [row] = await db.select({ id: oauthModels.id }).from(oauthModels).where(and(eq(oauthModels.model, this.model), condition)).limit(1);
      return { ...payload, jti: `${HASHED_REF}${row!.id}` } as AdapterPayload;
    }

    async consume(id: string): Promise<void> {
      await db.update(oauthModels).set({ consumedAt: new Date() }).where(and(eq(oauthModels.model, this.model), eq(oauthModels.id, this.key(id))));
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') {
        await db.delete(oauthApps).where(and(eq(oauthApps.clientId, id), isNull(oauthApps.workspaceId)));
        return;
      }
      await db.delete(oauthModels).where(and(eq(oauthModels.model, this.model), eq(oauthModels.id, this.key(id))));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.delete(oauthModels).where(eq(oauthModels.grantId, grantId));
    }
  };
}

const HASHED_REF = 'h:';
