/**
 * OAuth 2.1 for integrations (docs/oauth.md): panva's oidc-provider is the
 * authorization server (authorization code with PKCE S256, refresh rotation
 * with reuse detection, revocation, introspection, the device flow, dynamic
 * registration), mounted under /oauth and storing through oauth-adapter.ts.
 * This service adds what is ours: the apps a workspace registers, the
 * consent given through /v1 (the grant is the asked scopes limited to the
 * person's role in the chosen workspace), the device code approved through
 * /v1, and turning an access token into the request's auth context.
 */
import { generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, asc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { AuthContext } from '../../platform/auth/auth-context.ts';
import { isPlan, type Plan } from '../../platform/auth/plans.ts';
import { isRole, ROLE_SCOPES, type Role } from '../../platform/auth/roles.ts';
import { SCOPES } from '../../platform/auth/scopes.ts';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { memberships, users } from '../people/people.tables.ts';
import type { AccountsService } from '../people/accounts.service.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { createAdapterClass, parseAccountId, sha256 } from './oauth-adapter.ts';
import { oauthApps, oauthModels, type OAuthAppRow } from './oauth.tables.ts';
import { SCOPE_WORDS } from './scope-words.ts';

export { SCOPE_WORDS };

export const ACCESS_TOKEN_PREFIX = 'fbo_at_';
export const REFRESH_TOKEN_PREFIX = 'fbo_rt_';


export interface OAuthOptions {
  db: Db;
  accounts: AccountsService;
  publicBaseUrl: string;
  secretKey: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlDays: number;
  dynamicRegistration: boolean;
  trustProxy: boolean;
}

export interface OAuthAppView {
  id: number;
  client_id: string;
  name: string;
  redirect_uris: string[];
  public: boolean;
  created_at: string;
}

export interface ScopeView { scope: string; description: string }
export interface WorkspaceChoice { id: number; name: string; role: string; granted_scopes: string[] }

export interface InteractionView {
  uid: string;
  app: { client_id: string; name: string };
  scopes: ScopeView[];
  workspaces: WorkspaceChoice[];
}

export interface ConnectedAppView {
  grant_id: string;
  app: { id: number; client_id: string; name: string };
  workspace: { id: number; name: string };
  scopes: string[];
  connected_at: string | null;
}

function toAppView(app: OAuthAppRow): OAuthAppView {
  return { id: app.id, client_id: app.clientId, name: app.name, redirect_uris: app.redirectUris, public: app.public, created_at: app.createdAt.toISOString() };
}

function words(scopes: readonly string[]): ScopeView[] {
  return scopes.map((scope) => ({ scope, description: (SCOPE_WORDS as Record<string, string>)[scope] ?? scope }));
}

/** Asked scopes (a space-separated string) that are ours, in a stable order. */
function askedScopes(scope: unknown): string[] {
  const asked = new Set(typeof scope === 'string' ? scope.split(' ') : []);
  return SCOPES.filter((s) => asked.has(s));
}

/** An exact redirect URI: absolute, http(s) or a private-use scheme, no fragment. */
function checkRedirectUri(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw ERRORS.validation({ redirect_uris: [`"${value.slice(0, 100)}" is not an absolute URL.`] });
  }
  if (url.hash || value.length > 2000) throw ERRORS.validation({ redirect_uris: ['A redirect URI has no fragment and at most 2000 characters.'] });
  if (url.protocol === 'javascript:' || url.protocol === 'data:') throw ERRORS.validation({ redirect_uris: ['This scheme cannot be a redirect URI.'] });
  return value;
}

export class OAuthService {
  readonly provider: Provider;
  /** The API's resource indicator (RFC 8707), the default when a client names none. */
  readonly resource: string;
  /** The resources a token may be for: the API, and the MCP server (which calls the API with the same token). */
  readonly resources: readonly string[];
  private readonly db: Db;
  private readonly options: OAuthOptions;

  constructor(options: OAuthOptions) {
    this.options = options;
    this.db = options.db;
    const issuer = options.publicBaseUrl.replace(/\/+$/, '');
    this.resource = `${issuer}/v1`;
    this.resources = [this.resource, `${issuer}/mcp`];
    this.provider = this.createProvider(issuer);
  }

  private createProvider(issuer: string): Provider {
    const { db, options } = this;
    const resource = this.resource;
    const resources = this.resources;
    const accessTokenTTL = options.accessTokenTtlSeconds;
    const refreshTtl = options.refreshTokenTtlDays * 86_400;
    // Signing keys are needed by the library's configuration only (no ID tokens are issued: no `openid` scope).
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const provider = new Provider(issuer, {
      adapter: createAdapterClass(db),
      jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'ES256' }] },
      findAccount: async (_ctx: unknown, id: string) => {
        const account = parseAccountId(id);
        if (!account) return undefined;
        const [member] = await db.select({ userId: memberships.userId }).from(memberships)
          .where(and(eq(memberships.userId, account.userId), eq(memberships.workspaceId, account.workspaceId)));
        return member ? { accountId: id, claims: async () => ({ sub: id }) } : undefined;
      },
      responseTypes: ['code'],
      pkce: { required: () => true },
      clientDefaults: { grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'], response_types: ['code'], token_endpoint_auth_method: 'none', id_token_signed_response_alg: 'ES256' },
      issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: accessTokenTTL,
        RefreshToken: refreshTtl,
        AuthorizationCode: 60,
        DeviceCode: 600,
        Grant: refreshTtl,
        Interaction: 3600,
        Session: 86_400,
        IdToken: 3600,
      },
      features: {
        devInteractions: { enabled: false },
        deviceFlow: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        registration: { enabled: options.dynamicRegistration, initialAccessToken: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, indicator: string) => {
            if (!resources.includes(indicator)) throw new errors.InvalidTarget!(`The resources are this service's API (${resources.join(' and ')}).`);
            return { scope: SCOPES.join(' '), accessTokenFormat: 'opaque', accessTokenTTL };
          },
        },
      },
      extraClientMetadata: {
        properties: ['flipbook_public_only'],
        // Dynamic registration is for public clients only: a secret would be made by anyone who asks.
        validator(ctx: KoaContextWithOIDC | undefined, key: string, _value: unknown, metadata: Record<string, unknown>) {
          if (key === 'flipbook_public_only' && ctx?.oidc?.route === 'registration' && metadata.token_endpoint_auth_method !== 'none') {
            throw new errors.InvalidClientMetadata!('Only public clients (token_endpoint_auth_method "none", with PKCE) may register themselves.');
          }
        },
      },
      interactions: {
        url: async (ctx: KoaContextWithOIDC, interaction: { uid: string }) => {
          const consent = `/app/oauth/consent?uid=${encodeURIComponent(interaction.uid)}`;
          const token = ctx.cookies.get('flipbook_session');
          const signedIn = token ? await options.accounts.authenticate(token) : null;
          return signedIn ? consent : `/app/sign-in?next=${encodeURIComponent(consent)}`;
        },
      },
      cookies: {
        keys: [sha256(`oauth-cookies:${options.secretKey}`)],
        // The interaction cookie is sent to /v1 too: the consent operation checks it, so only the browser that started a flow can finish it.
        short: { path: '/', sameSite: 'lax', httpOnly: true },
        long: { sameSite: 'lax', httpOnly: true },
      },
      routes: {
        authorization: '/oauth/authorize',
        token: '/oauth/token',
        revocation: '/oauth/revoke',
        introspection: '/oauth/introspect',
        device_authorization: '/oauth/device_authorization',
        code_verification: '/oauth/device',
        registration: '/oauth/register',
        jwks: '/oauth/jwks',
        end_session: '/oauth/session/end',
        userinfo: '/oauth/userinfo',
        pushed_authorization_request: '/oauth/par',
        backchannel_authentication: '/oauth/backchannel',
        challenge: '/oauth/challenge',
      },
      renderError: async (ctx: KoaContextWithOIDC, out: Record<string, unknown>) => {
        ctx.type = 'json';
        ctx.body = out;
      },
    });
    provider.proxy = options.trustProxy;
    // Recognisable, opaque tokens: `fbo_at_…` and `fbo_rt_…` followed by the library's 256 random bits.
    for (const [model, prefix] of [[provider.AccessToken, ACCESS_TOKEN_PREFIX], [provider.RefreshToken, REFRESH_TOKEN_PREFIX]] as const) {
      const generate = model.prototype.generateTokenId;
      model.prototype.generateTokenId = function prefixed(this: unknown) {
        return prefix + generate.call(this);
      };
    }
    // Client secrets are stored as SHA-256 only: the presented secret is hashed before the library's constant-time comparison.
    const client = (provider as unknown as { Client: { prototype: { clientSecret?: string; compareClientSecret(actual: string): boolean } } }).Client.prototype;
    client.compareClientSecret = function compareHashed(this: { clientSecret?: string }, actual: string): boolean {
      if (typeof actual !== 'string' || !this.clientSecret) return false;
      const a = Buffer.from(sha256(actual));
      const b = Buffer.from(this.clientSecret);
      return a.length === b.length && timingSafeEqual(a, b);
    };
    return provider;
  }

  // --- Apps -------------------------------------------------------------------

  async listApps(workspaceId: number): Promise<OAuthAppView[]> {
    const rows = await this.db.select().from(oauthApps).where(eq(oauthApps.workspaceId, workspaceId)).orderBy(asc(oauthApps.id));
    return rows.map(toAppView);
  }

  async createApp(input: { workspaceId: number; name: unknown; redirectUris: unknown; public: boolean; createdByUserId?: number | null }): Promise<OAuthAppView & { client_secret?: string }> {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (!name || name.length > 200) throw ERRORS.validation({ name: ['The name has 1 to 200 characters.'] });
    const uris = Array.isArray(input.redirectUris) ? input.redirectUris : [];
    if (uris.length > 20 || uris.some((u) => typeof u !== 'string')) throw ERRORS.validation({ redirect_uris: ['Up to 20 redirect URIs, as strings.'] });
    const redirectUris = [...new Set((uris as string[]).map(checkRedirectUri))];
    const clientId = `fbo_app_${randomBytes(16).toString('base64url')}`;
    const secret = input.public ? undefined : `fbo_cs_${randomBytes(32).toString('base64url')}`;
    const [row] = await this.db.insert(oauthApps).values({
      workspaceId: input.workspaceId, clientId, name, redirectUris, public: input.public,
      secretHash: secret ? sha256(secret) : null, createdByUserId: input.createdByUserId ?? null,
    }).returning();
    return { ...toAppView(row!), ...(secret ? { client_secret: secret } : {}) };
  }

  /** Deletes an app and every grant and token it holds. Another workspace's app answers 404. */
  async deleteApp(workspaceId: number, appId: number): Promise<void> {
    const [row] = await this.db.delete(oauthApps).where(and(eq(oauthApps.id, appId), eq(oauthApps.workspaceId, workspaceId))).returning();
    if (!row) throw ERRORS.notFound('OAuth app');
    await this.db.delete(oauthModels).where(eq(oauthModels.clientId, row.clientId));
  }

  // --- Consent ----------------------------------------------------------------

  private async memberWorkspaces(userId: number, asked: string[]): Promise<WorkspaceChoice[]> {
    const rows = await this.db.select({ id: workspaces.id, name: workspaces.name, role: memberships.role })
      .from(memberships).innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
      .where(eq(memberships.userId, userId)).orderBy(asc(workspaces.name), asc(workspaces.id));
    return rows.filter((r) => isRole(r.role)).map((r) => ({
      id: r.id, name: r.name, role: r.role,
      granted_scopes: asked.filter((s) => (ROLE_SCOPES[r.role as Role] as readonly string[]).includes(s)),
    }));
  }

  private async appOf(clientId: unknown): Promise<OAuthAppRow> {
    if (typeof clientId !== 'string') throw ERRORS.notFound('Authorization request');
    const [app] = await this.db.select().from(oauthApps).where(eq(oauthApps.clientId, clientId));
    if (!app) throw ERRORS.notFound('Authorization request');
    return app;
  }

  /** A pending authorization request; only the browser that started it (its interaction cookie) sees it. */
  private async interaction(uid: string, interactionCookie: string | undefined) {
    const interaction = uid.length <= 100 ? await this.provider.Interaction.find(uid) : undefined;
    if (!interaction || interaction.result || interactionCookie !== uid) throw ERRORS.notFound('Authorization request');
    return interaction;
  }

  async interactionDetails(uid: string, userId: number, interactionCookie: string | undefined): Promise<InteractionView> {
    const interaction = await this.interaction(uid, interactionCookie);
    const app = await this.appOf(interaction.params.client_id);
    const asked = askedScopes(interaction.params.scope);
    return { uid, app: { client_id: app.clientId, name: app.name }, scopes: words(asked), workspaces: await this.memberWorkspaces(userId, asked) };
  }

  /** A grant for the person in the workspace: the asked scopes their role allows; the others rejected. */
  /** The resource a request named (one of ours: the provider has checked it), else the API. */
  private resourceOf(params: Record<string, unknown>): string {
    const named = Array.isArray(params.resource) ? params.resource[0] : params.resource;
    return typeof named === 'string' && this.resources.includes(named) ? named : this.resource;
  }

  private async makeGrant(userId: number, workspaceId: number, clientId: string, scope: unknown, resource: string): Promise<{ accountId: string; grantId: string; granted: string[] }> {
    const [member] = await this.db.select({ role: memberships.role }).from(memberships)
      .where(and(eq(memberships.userId, userId), eq(memberships.workspaceId, workspaceId)));
    if (!member || !isRole(member.role)) throw ERRORS.validation({ workspace_id: ['You are not a member of this workspace.'] });
    const asked = askedScopes(scope);
    const allowed = ROLE_SCOPES[member.role] as readonly string[];
    const granted = asked.filter((s) => allowed.includes(s));
    if (granted.length === 0) throw ERRORS.validation({ workspace_id: [`Your role in this workspace (${member.role}) allows none of the asked scopes.`] });
    const accountId = `${userId}:${workspaceId}`;
    const grant = new this.provider.Grant({ accountId, clientId });
    grant.addResourceScope(resource, granted.join(' '));
    const rejected = asked.filter((s) => !allowed.includes(s));
    if (rejected.length) grant.rejectResourceScope(resource, rejected.join(' '));
    return { accountId, grantId: await grant.save(), granted };
  }

  async consent(uid: string, userId: number, workspaceId: number, interactionCookie: string | undefined): Promise<string> {
    const interaction = await this.interaction(uid, interactionCookie);
    const { accountId, grantId } = await this.makeGrant(userId, workspaceId, String(interaction.params.client_id), interaction.params.scope, this.resourceOf(interaction.params));
    interaction.result = { login: { accountId }, consent: { grantId } };
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    return interaction.returnTo;
  }

  async deny(uid: string, interactionCookie: string | undefined): Promise<string> {
    const interaction = await this.interaction(uid, interactionCookie);
    interaction.result = { error: 'access_denied', error_description: 'The person refused to connect the app.' };
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    return interaction.returnTo;
  }

  // --- Device flow ------------------------------------------------------------

  private async deviceCode(userCode: unknown) {
    // As oidc-provider normalizes what a person types: letters only, upper case.
    const normalized = typeof userCode === 'string' ? userCode.replace(/[^a-z]/gi, '').toUpperCase() : '';
    const code = normalized && normalized.length <= 32 ? await this.provider.DeviceCode.findByUserCode(normalized) : undefined;
    if (!code || code.isExpired || code.accountId || code.error) throw ERRORS.notFound('Device code');
    return code;
  }

  async deviceDetails(userCode: unknown, userId: number): Promise<Omit<InteractionView, 'uid'>> {
    const code = await this.deviceCode(userCode);
    const app = await this.appOf(code.clientId);
    const asked = askedScopes(code.params.scope);
    return { app: { client_id: app.clientId, name: app.name }, scopes: words(asked), workspaces: await this.memberWorkspaces(userId, asked) };
  }

  async approveDevice(userCode: unknown, userId: number, workspaceId: number): Promise<void> {
    const code = await this.deviceCode(userCode);
    const resource = this.resourceOf(code.params);
    const { accountId, grantId, granted } = await this.makeGrant(userId, workspaceId, code.clientId, code.params.scope, resource);
    Object.assign(code, { accountId, grantId, scope: granted.join(' '), resource, authTime: Math.floor(Date.now() / 1000) });
    await code.save();
  }

  async denyDevice(userCode: unknown): Promise<void> {
    const code = await this.deviceCode(userCode);
    Object.assign(code, { error: 'access_denied', errorDescription: 'The person refused to connect the app.' });
    await code.save();
  }

  // --- Connected apps ---------------------------------------------------------

  async connectedApps(userId: number): Promise<ConnectedAppView[]> {
    const rows = await this.db.select({ grant: oauthModels, app: oauthApps, workspace: { id: workspaces.id, name: workspaces.name } })
      .from(oauthModels)
      .innerJoin(oauthApps, eq(oauthApps.clientId, oauthModels.clientId))
      .innerJoin(workspaces, eq(workspaces.id, oauthModels.workspaceId))
      .where(and(eq(oauthModels.model, 'Grant'), eq(oauthModels.userId, userId), or(isNull(oauthModels.expiresAt), gt(oauthModels.expiresAt, sql`now()`))))
      .orderBy(asc(oauthApps.name));
    return rows.map(({ grant, app, workspace }) => {
      const resources = (grant.payload.resources ?? {}) as Record<string, string>;
      const iat = typeof grant.payload.iat === 'number' ? new Date(grant.payload.iat * 1000).toISOString() : null;
      return {
        grant_id: grant.grantId!, app: { id: app.id, client_id: app.clientId, name: app.name }, workspace,
        scopes: [...new Set(this.resources.flatMap((r) => (resources[r] ?? '').split(' ')).filter(Boolean))], connected_at: iat,
      };
    });
  }

  /** Revokes one of the person's grants and every token of it; another person's answers 404. */
  async revokeGrant(userId: number, grantId: string): Promise<void> {
    const [grant] = await this.db.select({ grantId: oauthModels.grantId }).from(oauthModels)
      .where(and(eq(oauthModels.model, 'Grant'), eq(oauthModels.grantId, grantId), eq(oauthModels.userId, userId)));
    if (!grant) throw ERRORS.notFound('Connected app');
    await this.db.delete(oauthModels).where(eq(oauthModels.grantId, grantId));
  }

  /** Every grant and token a person holds in a workspace (they were removed from it). */
  static async revokeMember(db: Pick<Db, 'delete'>, userId: number, workspaceId: number): Promise<void> {
    await db.delete(oauthModels).where(and(eq(oauthModels.userId, userId), eq(oauthModels.workspaceId, workspaceId)));
  }

  // --- Tokens on the API --------------------------------------------------------

  /**
   * The auth context of an access token, read in one statement on every
   * request: the token (by its hash, unexpired), the app, and the person's
   * membership now, so a revoked grant or a removed member is refused at once
   * in every process. The scopes are the granted ones still allowed by the role.
   */
  async authenticate(token: string): Promise<AuthContext | null> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX) || token.length > 200) return null;
    const [row] = await this.db
      .select({ token: oauthModels, app: oauthApps, role: memberships.role, email: users.email, workspace: workspaces })
      .from(oauthModels)
      .innerJoin(oauthApps, eq(oauthApps.clientId, oauthModels.clientId))
      .innerJoin(memberships, and(eq(memberships.userId, oauthModels.userId), eq(memberships.workspaceId, oauthModels.workspaceId)))
      .innerJoin(users, eq(users.id, oauthModels.userId))
      .innerJoin(workspaces, eq(workspaces.id, oauthModels.workspaceId))
      .where(and(eq(oauthModels.model, 'AccessToken'), eq(oauthModels.id, sha256(token)), gt(oauthModels.expiresAt, sql`now()`)));
    if (!row || !isRole(row.role) || !this.resources.includes(String(row.token.payload.aud))) return null;
    const allowed = ROLE_SCOPES[row.role] as readonly string[];
    const scopes = String(row.token.payload.scope ?? '').split(' ').filter((s) => allowed.includes(s));
    const ws = row.workspace;
    return {
      workspaceId: ws.id,
      workspace: { name: ws.name, slug: ws.slug, canRename: ws.canRename },
      plan: (isPlan(ws.plan) ? ws.plan : 'free') as Plan,
      scopes,
      method: 'oauth',
      keyId: null,
      keyPrefix: null,
      mode: null,
      person: null,
      oauth: {
        appId: row.app.id, appName: row.app.name, clientId: row.app.clientId, grantId: row.token.grantId ?? '',
        userId: row.token.userId!, email: row.email, role: row.role,
      },
    };
  }

  /** Grants of apps by client id, for tests and the CLI. */
  async grantIdsOf(clientIds: string[]): Promise<string[]> {
    if (clientIds.length === 0) return [];
    const rows = await this.db.select({ grantId: oauthModels.grantId }).from(oauthModels)
      .where(and(eq(oauthModels.model, 'Grant'), inArray(oauthModels.clientId, clientIds)));
    return rows.map((r) => r.grantId!);
  }
}
