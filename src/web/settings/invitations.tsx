import { useState } from 'preact/hooks';
import { call, client, grantableRoles, type DataOf, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Select } from '../components/select.tsx';
import { notify } from '../components/toast.tsx';
import { capitalize, formatDate } from '../format.ts';
import { useResource } from '../resource.ts';

type Invitation = DataOf<'/v1/invitations', 'get'>[number];

/** Inviting people by e-mail, and the invitations not yet accepted (admins and owners). */
export function Invitations() {
  const invitations = useResource(() => call(client.GET('/v1/invitations')));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [listProblem, setListProblem] = useState<Problem | null>(null);
  const [revoking, setRevoking] = useState<Invitation | null>(null);

  const invite = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy('invite');
    const result = await call(client.POST('/v1/invitations', { body: { email: email.trim(), role: role as never } }));
    setBusy(null);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    setEmail('');
    await invitations.reload();
    notify(`Invitation sent to ${result.data.email}.`);
  };

  const resend = async (invitation: Invitation) => {
    if (busy) return;
    setBusy(String(invitation.id));
    const result = await call(client.POST('/v1/invitations/{invitationId}/resend', { params: { path: { invitationId: invitation.id as never } } }));
    setBusy(null);
    if (!result.ok) return setListProblem(result.problem);
    setListProblem(null);
    await invitations.reload();
    notify(`A new invitation was sent to ${invitation.email}. The previous link no longer works.`);
  };

  return (
    <>
      <section class="card" aria-labelledby="invite">
        <h2 id="invite">Invite someone</h2>
        <form class="stack" onSubmit={invite} noValidate>
          <TextInput label="E-mail address" type="email" name="invite-email" autoComplete="off" value={email} onValue={setEmail} errors={fieldErrors(problem, 'email')} />
          <Select label="Role" name="invite-role" value={role} onValue={setRole} errors={fieldErrors(problem, 'role')} options={grantableRoles.value.map((r) => ({ value: r, label: capitalize(r) }))} />
          <ErrorMessage problem={problem} shownFields={['email', 'role']} title="The invitation was not sent" />
          <Button type="submit" variant="primary" busy={busy === 'invite'}>Send invitation</Button>
        </form>
      </section>
      <section class="card" aria-labelledby="pending">
        <h2 id="pending">Pending invitations</h2>
        {invitations.loading && !invitations.data && <Loading what="invitations" />}
        <ErrorMessage problem={invitations.problem} title="The invitations could not be read" />
        {invitations.data?.length === 0 && <p class="empty">No invitations are waiting to be accepted.</p>}
        {invitations.data && invitations.data.length > 0 && (
          <ul class="item-list" aria-label="Pending invitations">
            {invitations.data.map((invitation) => (
              <li key={invitation.id} class="item">
                <div>
                  <p class="item-title">{invitation.email}</p>
                  <p class="item-meta">
                    {capitalize(invitation.role)} · invited {formatDate(invitation.created_at)}
                    {invitation.invited_by ? ` by ${invitation.invited_by.email}` : ''} · expires {formatDate(invitation.expires_at)}
                  </p>
                </div>
                <div class="actions">
                  <Button busy={busy === String(invitation.id)} onClick={() => void resend(invitation)}>
                    Resend<Hidden> invitation to {invitation.email}</Hidden>
                  </Button>
                  <Button variant="danger" onClick={() => setRevoking(invitation)}>
                    Revoke<Hidden> invitation to {invitation.email}</Hidden>
                  </Button>
                </div>
              </li>
            ))}
          </ul>
        )}
        <ErrorMessage problem={listProblem} title="The invitation was not sent again" />
      </section>
      {revoking && (
        <Confirm
          title={`Revoke the invitation to ${revoking.email}?`}
          confirmLabel="Revoke invitation"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/invitations/{invitationId}', { params: { path: { invitationId: revoking.id as never } } }));
            if (result.ok) {
              await invitations.reload();
              notify(`The invitation to ${revoking.email} was revoked.`);
            }
            return result;
          }}
        >
          <p>The link in the invitation stops working. You can invite {revoking.email} again later.</p>
        </Confirm>
      )}
    </>
  );
}
