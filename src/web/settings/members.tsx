import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { account, call, client, grantableRoles, managesPeople, rank, type DataOf, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { BareSelect } from '../components/select.tsx';
import { Table } from '../components/table.tsx';
import { notify } from '../components/toast.tsx';
import { capitalize, formatDate } from '../format.ts';
import { useResource } from '../resource.ts';
import { Invitations } from './invitations.tsx';

type Member = DataOf<'/v1/members', 'get'>[number];

/** Settings → Members: who is in the workspace; admins and owners change roles, remove members and invite. */
export default function Members() {
  const workspace = account.value!.active_workspace;
  const members = useResource(() => call(client.GET('/v1/members')));
  const manage = managesPeople.value;
  const [confirm, setConfirm] = useState<{ member: Member; leaving: boolean } | null>(null);
  if (!workspace) {
    return (
      <Page title="Members">
        <p>You are not a member of any workspace.</p>
      </Page>
    );
  }
  return (
    <Page title="Members">
      <p>The people in <strong>{workspace.name}</strong> and their roles.{manage ? '' : ' Only admins and owners change roles, remove members and invite people.'}</p>
      {members.loading && !members.data && <Loading what="members" />}
      <ErrorMessage problem={members.problem} title="The members could not be read" />
      {members.data && (
        <Table
          caption={`Members of ${workspace.name}`}
          hideCaption
          head={
            <tr>
              <th scope="col">E-mail address</th>
              <th scope="col">Name</th>
              <th scope="col" id="members-role">Role</th>
              <th scope="col">Joined</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          }
        >
          {members.data.map((member) => (
            <MemberRow key={member.user_id} member={member} manage={manage} onRemove={(leaving) => setConfirm({ member, leaving })} onChanged={members.reload} />
          ))}
        </Table>
      )}
      {confirm && <RemoveMember {...confirm} onClose={() => setConfirm(null)} onRemoved={members.reload} />}
      {manage && <Invitations />}
    </Page>
  );
}

function MemberRow({ member, manage, onRemove, onChanged }: { member: Member; manage: boolean; onRemove: (leaving: boolean) => void; onChanged: () => Promise<void> }) {
  const [role, setRole] = useState<string>(member.role);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const emailId = `member-${member.user_id}-email`;
  // One's own role, or one above one's own, is not for this screen to change.
  const editable = manage && !member.you && rank(member.role) <= rank(account.value!.active_workspace!.role);
  const save = async () => {
    if (busy) return;
    setBusy(true);
    const result = await call(client.PATCH('/v1/members/{userId}', { params: { path: { userId: member.user_id as never } }, body: { role: role as never } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    notify(`${member.email} is now ${role === 'admin' || role === 'owner' ? 'an' : 'a'} ${role}.`);
    await onChanged();
  };
  return (
    <tr>
      <td id={emailId}>
        {member.email}
        {member.you && <span class="badge">You</span>}
      </td>
      <td>{member.name || <span class="muted">No name</span>}</td>
      <td>
        {editable ? (
          <div class="inline-form">
            <BareSelect aria-labelledby={`members-role ${emailId}`} value={role} onValue={setRole} options={grantableRoles.value.map((r) => ({ value: r, label: capitalize(r) }))} />
            {role !== member.role && (
              <Button onClick={save} busy={busy}>
                Save role<Hidden> of {member.email}</Hidden>
              </Button>
            )}
          </div>
        ) : (
          capitalize(member.role)
        )}
        <ErrorMessage problem={problem} title={`The role of ${member.email} was not changed`} />
      </td>
      <td>{formatDate(member.joined_at)}</td>
      <td>
        {member.you ? (
          <Button variant="danger" onClick={() => onRemove(true)}>Leave workspace</Button>
        ) : (
          manage && rank(member.role) <= rank(account.value!.active_workspace!.role) && (
            <Button variant="danger" onClick={() => onRemove(false)}>
              Remove<Hidden> {member.email}</Hidden>
            </Button>
          )
        )}
      </td>
    </tr>
  );
}

function RemoveMember({ member, leaving, onClose, onRemoved }: { member: Member; leaving: boolean; onClose: () => void; onRemoved: () => Promise<void> }) {
  const { route } = useLocation();
  const workspace = account.value!.active_workspace!;
  return (
    <Confirm
      title={leaving ? `Leave ${workspace.name}?` : `Remove ${member.email}?`}
      confirmLabel={leaving ? 'Leave workspace' : 'Remove member'}
      onClose={onClose}
      onConfirm={async () => {
        const result = await call(client.DELETE('/v1/members/{userId}', { params: { path: { userId: member.user_id as never } } }));
        if (!result.ok) return result;
        if (leaving) {
          // Leaving keeps the person signed in, moved to another of their workspaces (or none).
          const again = await call(client.GET('/v1/account'));
          notify(`You left ${workspace.name}.`);
          if (again.ok) {
            account.value = again.data;
            route('/app', true);
          } else {
            route('/app/sign-in', true);
            account.value = null;
          }
        } else {
          await onRemoved();
          notify(`${member.email} was removed from ${workspace.name}.`);
        }
        return result;
      }}
    >
      <p>
        {leaving
          ? `You will no longer see ${workspace.name} or its books. Someone with the admin or owner role would have to invite you again.`
          : `${member.email} will no longer be able to use ${workspace.name}, and is signed out of it at once.`}
      </p>
    </Confirm>
  );
}
