/**
 * Workspaces and their API keys: creation, listing, revocation, rotation,
 * and turning a presented key into the request's auth context.
 */
import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import { displayPrefix, generateApiKey, keyMatches, keyMatchesHash, parseApiKey, type KeyMode } from '../../platform/auth/api-keys.ts';
import { isPlan, type Plan } from '../../platform/auth/plans.ts';
import { isGrantableScope, type GrantedScope } from '../../platform/auth/scopes.ts';
import type { Database, Db } from '../../platform/db/database.ts';
import { SQL_STATE, sqlStateOf } from '../../platform/db/sql-state.ts';
import { ERRORS } from '../../platform/errors.ts';
import { apiKeys, workspaces, type ApiKeyRow, type Workspace } from './workspaces.tables.ts';

/** Who is calling: resolved once per request from the key (or, later, an OAuth token). */
export interface AuthContext {
  workspaceId: number;
  workspace: { name: string; slug: string; canRename: boolean };
  plan: Plan;
  keyId: number;
  /** Display prefix of the key, never enough to use it. */
  keyPrefix: string;
  scopes: readonly string[];
  mode: KeyMode;
  method: 'api_key';
}

export interface ApiKeySummary {
  id: number;
  workspace_id: number;
  name: string;
  mode: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  rotated_from_id: number | null;
}

export interface CreatedApiKey extends ApiKeySummary {
  /** Shown once; only its hash is stored. */
  key: string;
}

export interface WorkspaceSummary {
  id: number;
  name: string;
  slug: string;
  plan: string;
  can_rename: boolean;
  created_at: string;
}

function toWorkspaceSummary(w: Workspace): WorkspaceSummary {
  return { id: w.id, name: w.name, slug: w.slug, plan: w.plan, can_rename: w.canRename, created_at: w.createdAt.toISOString() };
}

function toKeySummary(k: ApiKeyRow): ApiKeySummary {
  return {
    id: k.id,
    workspace_id: k.workspaceId,
    name: k.name,
    mode: k.mode,
    prefix: displayPrefix(k.mode, k.lookupId),
    scopes: k.scopes,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    rotated_from_id: k.rotatedFromId,
  };
}

export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || 'workspace';
}

const LAST_USED_RESOLUTION_MS = 60_000;
/** Safety net: even without a notification, a cached key is re-read this often. */
const AUTH_CACHE_TTL_MS = 30_000;
const AUTH_CHANGED_CHANNEL = 'flipbook_auth_changed';

interface CachedAuth {
  context: AuthContext;
  /** The stored SHA-256 of the key, as bytes (compared without re-decoding hex per request). */
  secretHash: Buffer;
  expiresAt: number;
}

export class WorkspacesService {
  /** Key id → when last_used_at was last written, so a busy key costs one write a minute. */
  private readonly lastUsedWrites = new Map<number, number>();
  private readonly db: Db;
  private readonly database: Database;
  /**
   * Authenticated keys by lookup id. Every process drops its cache when any
   * process revokes or rotates a key or changes a plan (NOTIFY), so a revoked
   * key answers 401 at once everywhere; while that channel is down nothing is cached.
   */
  private readonly authCache = new Map<string, CachedAuth>();
  private cacheTrusted = false;
  /** Bumped on every invalidation, so a lookup that raced one does not cache what it read. */
  private cacheGeneration = 0;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(database: Database) {
    this.database = database;
    this.db = database.db;
  }

  /** Subscribes to auth changes made by other processes; until then nothing is cached. */
  async start(): Promise<void> {
    this.unlisten = await this.database.listen(AUTH_CHANGED_CHANNEL, (_payload, healthy) => {
      this.cacheGeneration++;
      this.authCache.clear();
      this.cacheTrusted = healthy;
    });
    this.cacheTrusted = true;
  }

  async stop(): Promise<void> {
    this.cacheTrusted = false;
    await this.unlisten?.();
    this.unlisten = null;
  }

  private async authChanged(): Promise<void> {
    this.cacheGeneration++;
    this.authCache.clear();
    await this.database.notify(AUTH_CHANGED_CHANNEL, 'changed');
  }

  async createWorkspace(input: { name: string; plan?: string; slug?: string }): Promise<WorkspaceSummary> {
    const name = input.name.trim();
    if (!name || name.length > 255) throw ERRORS.validation({ name: ['The name must be 1 to 255 characters.'] });
    const plan = input.plan ?? 'free';
    if (!isPlan(plan)) throw ERRORS.validation({ plan: ['The plan must be one of free, pro, company.'] });
    const base = input.slug ? slugify(input.slug) : slugify(name);
    for (let attempt = 0; attempt < 20; attempt++) {
      const slug = attempt === 0 ? base : `${base}-${Math.random().toString(36).slice(2, 7)}`;
      const [row] = await this.db.insert(workspaces).values({ name, slug, plan }).onConflictDoNothing().returning();
      if (row) return toWorkspaceSummary(row);
      if (input.slug) throw ERRORS.conflict(`The slug "${slug}" is taken by another workspace.`);
    }
    throw ERRORS.conflict('Could not find a free slug for this workspace name.');
  }

  async listWorkspaces(): Promise<WorkspaceSummary[]> {
    const rows = await this.db.select().from(workspaces).orderBy(asc(workspaces.id));
    return rows.map(toWorkspaceSummary);
  }

  async getWorkspace(id: number): Promise<Workspace> {
    const [row] = await this.db.select().from(workspaces).where(eq(workspaces.id, id));
    if (!row) throw ERRORS.notFound('Workspace');
    return row;
  }

  /**
   * Replaces the generated signup name and slug once (the connector's
   * workspace-name operation): can_rename becomes false in the same update,
   * so two racing calls cannot both rename. A slug another workspace holds
   * violates the unique index and answers 422 on workspace_slug. Returns the
   * workspace before and after; null when it was already renamed.
   */
  async renameOnce(workspaceId: number, name: string, slug: string): Promise<{ before: Workspace; after: Workspace } | null> {
    const renamed = await this.db.transaction(async (tx) => {
      const [before] = await tx.select().from(workspaces).where(eq(workspaces.id, workspaceId)).for('update');
      if (!before) throw ERRORS.notFound('Workspace');
      if (!before.canRename) return null;
      try {
        const [after] = await tx.transaction(async (sp) =>
          sp.update(workspaces).set({ name, slug, canRename: false, updatedAt: new Date() }).where(eq(workspaces.id, workspaceId)).returning());
        return { before, after: after! };
      } catch (error) {
        if (sqlStateOf(error) === SQL_STATE.uniqueViolation) throw ERRORS.validation({ workspace_slug: [`The slug "${slug}" is taken by another workspace.`] });
        throw error;
      }
    });
    // The auth context carries the name, slug and can_rename: drop it everywhere.
    if (renamed) await this.authChanged();
    return renamed;
  }

  async getKey(keyId: number): Promise<ApiKeyRow> {
    const [row] = await this.db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
    if (!row) throw ERRORS.notFound('API key');
    return row;
  }

  async setPlan(workspaceId: number, plan: string): Promise<WorkspaceSummary> {
    if (!isPlan(plan)) throw ERRORS.validation({ plan: ['The plan must be one of free, pro, company.'] });
    const [row] = await this.db.update(workspaces).set({ plan, updatedAt: new Date() }).where(eq(workspaces.id, workspaceId)).returning();
    if (!row) throw ERRORS.notFound('Workspace');
    await this.authChanged();
    return toWorkspaceSummary(row);
  }

  async createKey(input: { workspaceId: number; name?: string; scopes: string[]; mode?: KeyMode; rotatedFromId?: number }): Promise<CreatedApiKey> {
    await this.getWorkspace(input.workspaceId);
    const scopes = [...new Set(input.scopes)];
    const unknown = scopes.filter((s) => !isGrantableScope(s));
    if (scopes.length === 0 || unknown.length > 0) {
      throw ERRORS.validation({ scopes: [unknown.length ? `Unknown scopes: ${unknown.join(', ')}.` : 'At least one scope is required.'] });
    }
    const mode = input.mode ?? 'live';
    const generated = generateApiKey(mode);
    const [row] = await this.db
      .insert(apiKeys)
      .values({
        workspaceId: input.workspaceId,
        name: input.name?.trim() || `${mode} key`,
        mode,
        lookupId: generated.lookupId,
        secretHash: generated.secretHash,
        scopes: scopes as GrantedScope[],
        rotatedFromId: input.rotatedFromId ?? null,
      })
      .returning();
    return { ...toKeySummary(row!), key: generated.plain };
  }

  async listKeys(workspaceId?: number): Promise<ApiKeySummary[]> {
    const rows = await this.db
      .select()
      .from(apiKeys)
      .where(workspaceId === undefined ? undefined : eq(apiKeys.workspaceId, workspaceId))
      .orderBy(asc(apiKeys.id));
    return rows.map(toKeySummary);
  }

  async revokeKey(keyId: number): Promise<ApiKeySummary> {
    const [row] = await this.db
      .update(apiKeys)
      .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
      .where(eq(apiKeys.id, keyId))
      .returning();
    if (!row) throw ERRORS.notFound('API key');
    await this.authChanged();
    return toKeySummary(row);
  }

  /** A new key with the same workspace, scopes and mode; the old one is revoked in the same transaction. */
  async rotateKey(keyId: number): Promise<CreatedApiKey> {
    const created = await this.db.transaction(async (tx) => {
      const [old] = await tx.select().from(apiKeys).where(eq(apiKeys.id, keyId));
      if (!old) throw ERRORS.notFound('API key');
      if (old.revokedAt) throw ERRORS.conflict('This key is already revoked; create a new key instead.');
      await tx.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, keyId));
      const generated = generateApiKey(old.mode as KeyMode);
      const [row] = await tx
        .insert(apiKeys)
        .values({
          workspaceId: old.workspaceId,
          name: old.name,
          mode: old.mode,
          lookupId: generated.lookupId,
          secretHash: generated.secretHash,
          scopes: old.scopes,
          rotatedFromId: old.id,
        })
        .returning();
      return { ...toKeySummary(row!), key: generated.plain };
    });
    await this.authChanged();
    return created;
  }

  /**
   * The answer of authenticate() when the cache alone can give it (synchronously,
   * so the request guard needs no promise on the hot path), else undefined.
   */
  authenticateCached(presented: string): AuthContext | null | undefined {
    const parsed = parseApiKey(presented);
    if (!parsed) return null;
    const cached = this.authCache.get(parsed.lookupId);
    if (!cached || !this.cacheTrusted || cached.expiresAt <= Date.now()) return undefined;
    if (!keyMatchesHash(presented, cached.secretHash) || cached.context.mode !== parsed.mode) return null;
    this.touchLastUsed(cached.context.keyId);
    return cached.context;
  }

  /** The auth context of a presented key, or null when it is unknown, malformed or revoked. */
  async authenticate(presented: string): Promise<AuthContext | null> {
    const cached = this.authenticateCached(presented);
    if (cached !== undefined) return cached;
    const parsed = parseApiKey(presented);
    if (!parsed) return null;
    const generation = this.cacheGeneration;
    const [row] = await this.db
      .select({ key: apiKeys, workspace: workspaces })
      .from(apiKeys)
      .innerJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
      .where(and(eq(apiKeys.lookupId, parsed.lookupId), isNull(apiKeys.revokedAt)));
    if (!row || !keyMatches(presented, row.key.secretHash) || row.key.mode !== parsed.mode) return null;
    this.touchLastUsed(row.key.id);
    const context: AuthContext = {
      workspaceId: row.key.workspaceId,
      workspace: { name: row.workspace.name, slug: row.workspace.slug, canRename: row.workspace.canRename },
      plan: (isPlan(row.workspace.plan) ? row.workspace.plan : 'free') as Plan,
      keyId: row.key.id,
      keyPrefix: displayPrefix(row.key.mode, row.key.lookupId),
      scopes: row.key.scopes,
      mode: parsed.mode,
      method: 'api_key',
    };
    if (this.cacheTrusted && generation === this.cacheGeneration) {
      if (this.authCache.size > 10_000) this.authCache.clear();
      this.authCache.set(parsed.lookupId, { context, secretHash: Buffer.from(row.key.secretHash, 'hex'), expiresAt: Date.now() + AUTH_CACHE_TTL_MS });
    }
    return context;
  }

  private touchLastUsed(keyId: number): void {
    const now = Date.now();
    if (now - (this.lastUsedWrites.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWrites.set(keyId, now);
    void this.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      .where(eq(apiKeys.id, keyId))
      .catch(() => this.lastUsedWrites.delete(keyId));
  }

  /**
   * On the first start with an empty database: one Company workspace and one
   * all-scope key, returned so the caller can print it once. Null otherwise.
   */
  async bootstrap(): Promise<{ workspace: WorkspaceSummary; key: CreatedApiKey } | null> {
    const [{ total } = { total: 0 }] = await this.db.select({ total: count() }).from(workspaces);
    if (total > 0) return null;
    const workspace = await this.createWorkspace({ name: 'Default workspace', plan: 'company' });
    const key = await this.createKey({ workspaceId: workspace.id, name: 'bootstrap key', scopes: ['*'], mode: 'live' });
    return { workspace, key };
  }
}
