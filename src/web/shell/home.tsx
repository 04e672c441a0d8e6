import { account } from '../api.ts';
import { Page } from '../components/page.tsx';

const article = (role: string) => (/^[aeiou]/.test(role) ? 'an' : 'a');

/** The signed-in home: who and where one is. The books screens come here later. */
export default function Home() {
  const { user, active_workspace: workspace } = account.value!;
  return (
    <Page title="Home">
      <p class="lead">Welcome, {user.name || user.email}.</p>
      {workspace ? (
        <p>
          You are {article(workspace.role)} <strong>{workspace.role}</strong> in the workspace <strong>{workspace.name}</strong>.
        </p>
      ) : (
        <p>You are not a member of any workspace yet. Ask an admin of a workspace to invite you.</p>
      )}
    </Page>
  );
}
