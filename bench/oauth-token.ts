/**
 * An OAuth access token for the benchmarks, obtained as an integration would:
 * a public app, the device flow, and a person (signed in with a sign-in link)
 * approving it through /v1. Only the API is used, as in the tests.
 */
import type { Runtime } from '../src/runtime.ts';
import { OPERATOR } from '../src/modules/workspaces/audit-trail.service.ts';

interface Answer { data: { csrf_token: string }; user_code: string; device_code: string; access_token: string }

async function json(response: Response): Promise<Answer> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.url}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as Answer;
}

export async function benchOAuthToken(runtime: Runtime, workspaceId: number): Promise<string> {
  const { services, url } = runtime;
  const member = await services.members.addByOperator(workspaceId, 'bench-oauth@example.com', 'owner', OPERATOR);
  const link = new URL(await services.accounts.issueSignInLink(member.email));
  const verified = await fetch(`${url}/v1/auth/sign-in-links/verify`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: link.searchParams.get('token') }),
  });
  const cookie = verified.headers.getSetCookie().find((c) => c.startsWith('flipbook_session='))!.split(';')[0]!;
  const csrf = (await json(verified)).data.csrf_token;
  const app = await services.oauth.createApp({ workspaceId, name: 'Bench', redirectUris: [], public: true });
  const device = await json(await fetch(`${url}/oauth/device_authorization`, {
    method: 'POST', body: new URLSearchParams({ client_id: app.client_id, scope: 'books:read books:write' }),
  }));
  await json(await fetch(`${url}/v1/oauth/device/approve`, {
    method: 'POST', headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ user_code: device.user_code, workspace_id: workspaceId }),
  }));
  const tokens = await json(await fetch(`${url}/oauth/token`, {
    method: 'POST', body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: app.client_id }),
  }));
  return tokens.access_token;
}
