/**
 * The /v1 operations of OAuth: the consent screen's (an authorization
 * request's details, consent, refusal), the device verification page's, the
 * person's connected apps, and the workspace's registered apps (admins).
 * Only a person signed in to the application calls them: tokens and keys get 403.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../platform/http/openapi.ts';
import { authOf, personOf } from '../../platform/http/route-config.ts';
import { Data, DateTime, Nullable } from '../../platform/http/schemas.ts';
import type { OAuthService } from './oauth.service.ts';

const ACCOUNT = { person: 'account' } as const;
const ADMIN = { person: 'workspace', role: 'admin' } as const;
const NoContent = (description: string) => Type.Null({ description });
/** oidc-provider's interaction cookie: it holds the uid of the flow this browser started. */
const INTERACTION_COOKIE = '_interaction';

const OAuthApp = Type.Object({
  id: Type.Integer(),
  client_id: Type.String(),
  name: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  public: Type.Boolean({ description: 'A public app has no secret and relies on PKCE alone; a confidential one authenticates with its secret.' }),
  created_at: DateTime,
}, { $id: 'OAuthApp', title: 'OAuth app' });

const CreatedOAuthApp = Type.Object({
  ...OAuthApp.properties,
  client_secret: Type.Optional(Type.String({ description: 'A confidential app\'s secret: in this answer only.' })),
}, { $id: 'CreatedOAuthApp', title: 'Created OAuth app' });

const ScopeWords = Type.Object({ scope: Type.String(), description: Type.String({ description: 'What the scope allows, in words.' }) });
const WorkspaceChoice = Type.Object({
  id: Type.Integer(), name: Type.String(), role: Type.String(),
  granted_scopes: Type.Array(Type.String(), { description: 'The asked scopes your role allows here: what the app would get in this workspace.' }),
});
const AuthorizationRequest = Type.Object({
  uid: Type.String(),
  app: Type.Object({ client_id: Type.String(), name: Type.String() }),
  scopes: Type.Array(ScopeWords, { description: 'The asked scopes.' }),
  workspaces: Type.Array(WorkspaceChoice, { description: 'Your workspaces, with your role in each.' }),
}, { $id: 'OAuthAuthorizationRequest', title: 'OAuth authorization request' });
const DeviceRequest = Type.Object({
  app: Type.Object({ client_id: Type.String(), name: Type.String() }),
  scopes: Type.Array(ScopeWords),
  workspaces: Type.Array(WorkspaceChoice),
}, { $id: 'OAuthDeviceRequest', title: 'OAuth device request' });
const Redirect = Type.Object({ redirect_to: Type.String({ description: 'Where the browser goes next (back to the authorization server, then to the app).' }) });
const ConnectedApp = Type.Object({
  grant_id: Type.String(),
  app: Type.Object({ id: Type.Integer(), client_id: Type.String(), name: Type.String() }),
  workspace: Type.Object({ id: Type.Integer(), name: Type.String() }),
  scopes: Type.Array(Type.String()),
  connected_at: Nullable(DateTime),
}, { $id: 'ConnectedApp', title: 'Connected app' });

const Uid = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 100 }) });
const UserCode = Type.String({ minLength: 1, maxLength: 64, description: 'The code the device shows, as typed (dashes and spaces ignored).' });

export const oauthRoutes: FastifyPluginAsyncTypebox<{ oauth: OAuthService }> = async (app, { oauth }) => {
  app.addSchema(OAuthApp);
  app.addSchema(CreatedOAuthApp);
  app.addSchema(AuthorizationRequest);
  app.addSchema(DeviceRequest);
  app.addSchema(ConnectedApp);

  app.get('/oauth/interactions/:uid', {
    schema: {
      operationId: 'getOAuthInteraction', tags: ['OAuth'], summary: 'An authorization request waiting for consent',
      description: 'For the consent screen: the app, the asked scopes in words, and your workspaces. Only the browser that started the request sees it.',
      params: Uid,
      response: { 200: Data(Type.Ref('OAuthAuthorizationRequest')), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: await oauth.interactionDetails(request.params.uid, personOf(request).userId, request.cookies[INTERACTION_COOKIE]) }));

  app.post('/oauth/interactions/:uid/consent', {
    schema: {
      operationId: 'consentOAuthInteraction', tags: ['OAuth'], summary: 'Allow the app in a workspace',
      description: 'Grants the asked scopes that your role in the workspace allows. Send the browser to `redirect_to`.',
      params: Uid,
      body: Type.Object({ workspace_id: Type.Integer({ minimum: 1 }) }),
      response: { 200: Data(Redirect), ...errorResponses(404, 422) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: { redirect_to: await oauth.consent(request.params.uid, personOf(request).userId, request.body.workspace_id, request.cookies[INTERACTION_COOKIE]) } }));

  app.post('/oauth/interactions/:uid/deny', {
    schema: {
      operationId: 'denyOAuthInteraction', tags: ['OAuth'], summary: 'Refuse the app',
      description: 'The app gets `error=access_denied`. Send the browser to `redirect_to`.',
      params: Uid,
      response: { 200: Data(Redirect), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: { redirect_to: await oauth.deny(request.params.uid, request.cookies[INTERACTION_COOKIE]) } }));

  app.post('/oauth/device', {
    schema: {
      operationId: 'getOAuthDeviceRequest', tags: ['OAuth'], summary: 'The app behind a device code',
      description: 'For the device verification page: the app that shows this code, the asked scopes in words, and your workspaces.',
      body: Type.Object({ user_code: UserCode }),
      response: { 200: Data(Type.Ref('OAuthDeviceRequest')), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: await oauth.deviceDetails(request.body.user_code, personOf(request).userId) }));

  app.post('/oauth/device/approve', {
    schema: {
      operationId: 'approveOAuthDevice', tags: ['OAuth'], summary: 'Allow a device in a workspace',
      body: Type.Object({ user_code: UserCode, workspace_id: Type.Integer({ minimum: 1 }) }),
      response: { 204: NoContent('The device gets its tokens at its next poll.'), ...errorResponses(404, 422) },
    },
    config: ACCOUNT,
  }, async (request, reply) => {
    await oauth.approveDevice(request.body.user_code, personOf(request).userId, request.body.workspace_id);
    return reply.code(204).send(null);
  });

  app.post('/oauth/device/deny', {
    schema: {
      operationId: 'denyOAuthDevice', tags: ['OAuth'], summary: 'Refuse a device',
      body: Type.Object({ user_code: UserCode }),
      response: { 204: NoContent('The device gets access_denied at its next poll.'), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request, reply) => {
    await oauth.denyDevice(request.body.user_code);
    return reply.code(204).send(null);
  });

  app.get('/account/connected-apps', {
    schema: {
      operationId: 'listConnectedApps', tags: ['OAuth'], summary: 'The apps you connected',
      response: { 200: Data(Type.Array(Type.Ref('ConnectedApp'))) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: await oauth.connectedApps(personOf(request).userId) }));

  app.delete('/account/connected-apps/:grantId', {
    schema: {
      operationId: 'revokeConnectedApp', tags: ['OAuth'], summary: 'Disconnect an app',
      description: 'Revokes the grant and every token of it, at once.',
      params: Type.Object({ grantId: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: { 204: NoContent('Disconnected.'), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request, reply) => {
    await oauth.revokeGrant(personOf(request).userId, request.params.grantId);
    return reply.code(204).send(null);
  });

  app.get('/oauth-apps', {
    schema: {
      operationId: 'listOAuthApps', tags: ['OAuth'], summary: 'The workspace\'s OAuth apps',
      response: { 200: Data(Type.Array(Type.Ref('OAuthApp'))) },
    },
    config: ADMIN,
  }, async (request) => ({ data: await oauth.listApps(authOf(request).workspaceId) }));

  app.post('/oauth-apps', {
    schema: {
      operationId: 'createOAuthApp', tags: ['OAuth'], summary: 'Register an OAuth app',
      description: 'A confidential app\'s secret is in this answer only. Redirect URIs must match exactly when the app uses them.',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 200 }),
        redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 20, default: [] }),
        public: Type.Boolean({ default: false, description: 'A public app (no secret: PKCE alone), for apps that cannot keep a secret.' }),
      }),
      response: { 201: Data(Type.Ref('CreatedOAuthApp')), ...errorResponses(422) },
    },
    config: ADMIN,
  }, async (request, reply) => {
    const auth = authOf(request);
    const created = await oauth.createApp({
      workspaceId: auth.workspaceId, name: request.body.name, redirectUris: request.body.redirect_uris,
      public: request.body.public, createdByUserId: auth.person?.userId ?? null,
    });
    return reply.code(201).send({ data: created });
  });

  app.delete('/oauth-apps/:appId', {
    schema: {
      operationId: 'deleteOAuthApp', tags: ['OAuth'], summary: 'Delete an OAuth app',
      description: 'Every grant and token of the app stops at once.',
      params: Type.Object({ appId: Type.Integer({ minimum: 1 }) }),
      response: { 204: NoContent('Deleted.'), ...errorResponses(404) },
    },
    config: ADMIN,
  }, async (request, reply) => {
    await oauth.deleteApp(authOf(request).workspaceId, request.params.appId);
    return reply.code(204).send(null);
  });
};
