/**
 * Workspaces and their API keys: creation, listing, revocation, rotation,
 * and turning a presented key into the request's auth context.
 */
import { and, asc, count, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { displayPrefix, generateApiKey, keyMatches, keyMatchesHash, parseApiKey, type KeyMode } from '../../platform/auth/api-keys.ts';
import { isPlan, type Plan } from '../../platform/auth/plans.ts';
import { isGrantableScope, type GrantedScope } from '../../platform/auth/scopes.ts';
import { scopesGrantableBy, type Role } from '../../platform/auth/roles.ts';
import { users } from '../people/people.tables.ts';
import { OPERATOR, recordAudit, type Actor } from './audit-trail.service.ts';
import type { Database, Db } from '../../platform/db/database.ts';
import { SQL_STATE, sqlStateOf } from '../../platform/db/sql-state.ts';
import { ERRORS } from '../../platform/errors.ts';
import { apiKeys, workspaces, type ApiKeyRow, type Workspace } from './workspaces.tables.ts';
import type { AuthContext } from '../../platform/auth/auth-context.ts';

export type { AuthContext } from '../../platform/auth/auth-context.ts';

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
  expires_at: string | null;
  created_by: { id: number; email: string } | null;
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

function toKeySummary(k: ApiKeyRow, createdBy: { id: number; email: string } | null = null): ApiKeySummary {
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
    expires_at: k.expiresAt?.toISOString() ?? null,
    created_by: createdBy,
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

  /**
   * A new key. `grantedBy`: the role of the person making it in the
   * application, whose scopes bound the key's (the CLI is not bounded).
   */
  async createKey(input: {
    workspaceId: number; name?: string; scopes: string[]; mode?: KeyMode; rotatedFromId?: number;
    expiresAt?: Date | null; actor?: Actor; grantedBy?: Role;
  }): Promise<CreatedApiKey> {
    await this.getWorkspace(input.workspaceId);
    const scopes = [...new Set(input.scopes)];
    const unknown = scopes.filter((s) => !isGrantableScope(s));
    if (scopes.length === 0 || unknown.length > 0) {
      throw ERRORS.validation({ scopes: [unknown.length ? `Unknown scopes: ${unknown.join(', ')}.` : 'At least one scope is required.'] });
    }
    if (input.grantedBy) {
      const grantable = scopesGrantableBy(input.grantedBy);
      const above = scopes.filter((s) => !grantable.includes(s));
      if (above.length > 0) throw ERRORS.validation({ scopes: [`Your role (${input.grantedBy}) cannot grant: ${above.join(', ')}.`] });
    }
    if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) throw ERRORS.validation({ expires_at: ['The expiry must be in the future.'] });
    const actor = input.actor ?? OPERATOR;
    const mode = input.mode ?? 'live';
    const generated = generateApiKey(mode);
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(apiKeys)
        .values({
          workspaceId: input.workspaceId,
          name: input.name?.trim() || `${mode} key`,
          mode,
          lookupId: generated.lookupId,
          secretHash: generated.secretHash,
          scopes: scopes as GrantedScope[],
          rotatedFromId: input.rotatedFromId ?? null,
          createdByUserId: actor.type === 'user' ? actor.userId : null,
          expiresAt: input.expiresAt ?? null,
        })
        .returning();
      await recordAudit(tx, input.workspaceId, actor, { action: 'api_key.created', targetType: 'api_key', targetId: row!.id, metadata: { name: row!.name, prefix: displayPrefix(mode, generated.lookupId), scopes, mode } });
      const createdBy = actor.type === 'user' ? { id: actor.userId, email: actor.label } : null;
      return { ...toKeySummary(row!, createdBy), key: generated.plain };
    });
  }

  /** Keys of one workspace (or all, for the CLI), with who made them. `activeOnly`: neither revoked nor expired. */
  async listKeys(workspaceId?: number, options: { activeOnly?: boolean } = {}): Promise<ApiKeySummary[]> {
    const rows = await this.db
      .select({ key: apiKeys, creator: { id: users.id, email: users.email } })
      .from(apiKeys)
      .leftJoin(users, eq(users.id, apiKeys.createdByUserId))
      .where(and(
        workspaceId === undefined ? undefined : eq(apiKeys.workspaceId, workspaceId),
        options.activeOnly ? and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`))) : undefined,
      ))
      .orderBy(asc(apiKeys.id));
    return rows.map((r) => toKeySummary(r.key, r.creator));
  }

  /** Revokes a key (401 at once in every process). `workspaceId` confines it: another workspace's key answers 404. */
  async revokeKey(keyId: number, options: { workspaceId?: number; actor?: Actor } = {}): Promise<ApiKeySummary> {
    const row = await this.db.transaction(async (tx) => {
      const [revoked] = await tx
        .update(apiKeys)
        .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
        .where(and(eq(apiKeys.id, keyId), options.workspaceId === undefined ? undefined : eq(apiKeys.workspaceId, options.workspaceId)))
        .returning();
      if (!revoked) throw ERRORS.notFound('API key');
      await recordAudit(tx, revoked.workspaceId, options.actor ?? OPERATOR, { action: 'api_key.revoked', targetType: 'api_key', targetId: revoked.id, metadata: { name: revoked.name, prefix: displayPrefix(revoked.mode, revoked.lookupId) } });
      return revoked;
    });
    await this.authChanged();
    return toKeySummary(row);
  }

  /**
   * A new key with the same workspace, name, scopes and mode. The old one
   * stops at once (`overlapHours` 0, the default) or keeps working for the
   * overlap, as Stripe's roll does, so deployments can switch without downtime.
   */
  async rotateKey(keyId: number, options: { workspaceId?: number; actor?: Actor; overlapHours?: number } = {}): Promise<CreatedApiKey> {
    const overlapHours = options.overlapHours ?? 0;
    if (!Number.isFinite(overlapHours) || overlapHours < 0 || overlapHours > 168) throw ERRORS.validation({ overlap_hours: ['The overlap is 0 to 168 hours (7 days).'] });
    const actor = options.actor ?? OPERATOR;
    const created = await this.db.transaction(async (tx) => {
      const [old] = await tx.select().from(apiKeys)
        .where(and(eq(apiKeys.id, keyId), options.workspaceId === undefined ? undefined : eq(apiKeys.workspaceId, options.workspaceId)))
        .for('update');
      if (!old) throw ERRORS.notFound('API key');
      if (old.revokedAt || (old.expiresAt && old.expiresAt.getTime() <= Date.now())) throw ERRORS.conflict('This key is already revoked or expired; create a new key instead.');
      const oldEnds = new Date(Date.now() + overlapHours * 3_600_000);
      if (overlapHours === 0) await tx.update(apiKeys).set({ revokedAt: oldEnds }).where(eq(apiKeys.id, keyId));
      else if (!old.expiresAt || old.expiresAt > oldEnds) await tx.update(apiKeys).set({ expiresAt: oldEnds }).where(eq(apiKeys.id, keyId));
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
          createdByUserId: actor.type === 'user' ? actor.userId : old.createdByUserId,
          expiresAt: old.expiresAt && old.expiresAt > oldEnds ? old.expiresAt : null,
        })
        .returning();
      await recordAudit(tx, old.workspaceId, actor, {
        action: 'api_key.rotated', targetType: 'api_key', targetId: old.id,
        metadata: { name: old.name, old_prefix: displayPrefix(old.mode, old.lookupId), new_key_id: row!.id, new_prefix: displayPrefix(row!.mode, row!.lookupId), overlap_hours: overlapHours },
      });
      const createdBy = actor.type === 'user' ? { id: actor.userId, email: actor.label } : null;
      return { ...toKeySummary(row!, createdBy), key: generated.plain };
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
    this.touchLastUsed(cached.context.keyId!);
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
      .where(and(eq(apiKeys.lookupId, parsed.lookupId), isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`))));
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
      person: null,
    };
    if (this.cacheTrusted && generation === this.cacheGeneration) {
      if (this.authCache.size > 10_000) this.authCache.clear();
      // A key with an expiry (a rotation's overlap) leaves the cache when it ends.
      const cachedUntil = Math.min(Date.now() + AUTH_CACHE_TTL_MS, row.key.expiresAt?.getTime() ?? Infinity);
      this.authCache.set(parsed.lookupId, { context, secretHash: Buffer.from(row.key.secretHash, 'hex'), expiresAt: cachedUntil });
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
