import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { call, client, signedIn, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Page } from '../components/page.tsx';

/** The link from an invitation e-mail: accepting it joins the workspace and signs in. */
export default function AcceptInvitation() {
  const { query, route } = useLocation();
  const token = query.token ?? '';
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const accept = async () => {
    if (busy) return;
    setBusy(true);
    const result = await call(client.POST('/v1/invitations/accept', { body: { token } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    signedIn(result.data);
    route('/app', true);
  };
  if (!token) {
    return (
      <Page title="Accept invitation">
        <p class="alert alert-error" role="alert">This address has no invitation token: open the link from the invitation e-mail as it is.</p>
      </Page>
    );
  }
  return (
    <Page title="Accept invitation">
      <p>You were invited to a Flipbook workspace. Accepting signs you in with the address the invitation was sent to and makes you a member.</p>
      <ErrorMessage problem={problem} title="The invitation was not accepted" />
      <Button variant="primary" onClick={accept} busy={busy}>Accept invitation</Button>
      {problem && <p><a href="/app/sign-in">Sign in another way</a></p>}
    </Page>
  );
}
