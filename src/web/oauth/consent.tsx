import { useLocation } from 'preact-iso/router';
import { call, client } from '../api.ts';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { useResource } from '../resource.ts';
import { GrantForm } from './grant-form.tsx';

/** /app/oauth/consent?uid=…: an app's authorization request (docs/oauth.md). Allow or Deny sends the browser back through the authorization server to the app. */
export default function Consent() {
  const { query } = useLocation();
  const uid = query.uid ?? '';
  const request = useResource(() => call(client.GET('/v1/oauth/interactions/{uid}', { params: { path: { uid } } })));
  const go = (result: Awaited<ReturnType<typeof call<{ data: { redirect_to: string } }>>>) => {
    if (!result.ok) return result.problem;
    window.location.assign(result.data.redirect_to);
    return null;
  };
  return (
    <Page title="Connect an app">
      {request.loading && !request.data && <Loading what="the app's request" />}
      <ErrorMessage problem={request.problem} title="This request could not be read: it may have expired, or been answered already. Start again from the app." />
      {request.data && (
        <GrantForm
          request={request.data}
          onAllow={async (workspaceId) => go(await call(client.POST('/v1/oauth/interactions/{uid}/consent', { params: { path: { uid } }, body: { workspace_id: workspaceId } })))}
          onDeny={async () => go(await call(client.POST('/v1/oauth/interactions/{uid}/deny', { params: { path: { uid } } })))}
        />
      )}
    </Page>
  );
}
