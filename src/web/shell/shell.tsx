import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { account, call, client, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Toaster } from '../components/toast.tsx';
import { WorkspaceSwitcher } from './workspace-switcher.tsx';
import { clearAllDrafts } from '../draft.ts';

const SETTINGS = [
  { href: '/app/settings/profile', label: 'Profile' },
  { href: '/app/settings/sessions', label: 'Sessions' },
  { href: '/app/settings/connected-apps', label: 'Connected apps' },
  { href: '/app/settings/members', label: 'Members' },
  { href: '/app/settings/api-keys', label: 'API keys' },
  { href: '/app/settings/oauth-apps', label: 'OAuth apps' },
];

// Publishing (issue 26).
const PUBLISHING = [
  { href: '/app/books', label: 'Books' },
  { href: '/app/upload', label: 'Upload' },
  { href: '/app/bulk-settings', label: 'Bulk settings' },
  { href: '/app/catalogs', label: 'Catalogs' },
  { href: '/app/brand', label: 'Brand' },
  { href: '/app/webhooks', label: 'Webhooks' },
];

function NavLink({ href, label }: { href: string; label: string }) {
  const { path } = useLocation();
  return (
    <a href={href} aria-current={path === href ? 'page' : undefined}>
      {label}
    </a>
  );
}

/** Every signed-in screen: a skip link, the header (workspace, sign out), the navigation, and the screen in <main>. */
export function Shell({ children }: { children: ComponentChildren }) {
  const { route } = useLocation();
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const me = account.value!;
  const signOut = async () => {
    setBusy(true);
    const result = await call(client.POST('/v1/auth/sign-out'));
    setBusy(false);
    if (!result.ok && result.problem.status !== 401) return setProblem(result.problem);
    // What was typed into forms stays on this browser only for the person who typed it.
    clearAllDrafts();
    route('/app/sign-in', true);
    account.value = null;
  };
  return (
    <div class="shell">
      <a class="skip-link" href="#main">Skip to main content</a>
      <header class="app-header">
        <a class="brand" href="/app">Flipbook</a>
        <WorkspaceSwitcher key={me.active_workspace?.id ?? 0} />
        <div class="who">
          <span class="who-email">{me.user.email}</span>
          <Button onClick={signOut} busy={busy}>Sign out</Button>
        </div>
        <ErrorMessage problem={problem} title="You were not signed out" />
      </header>
      <div class="app-body">
        <nav class="app-nav" aria-label="Main">
          <ul>
            <li><NavLink href="/app" label="Home" /></li>
            {PUBLISHING.map((link) => <li key={link.href}><NavLink {...link} /></li>)}
            {/* Analytics (issue 27) */}
            <li><NavLink href="/app/analytics" label="Analytics" /></li>
            <li>
              <span class="nav-group" id="nav-settings">Settings</span>
              <ul aria-labelledby="nav-settings">
                {SETTINGS.map((link) => <li key={link.href}><NavLink {...link} /></li>)}
              </ul>
            </li>
          </ul>
        </nav>
        <main id="main" class="app-main" tabIndex={-1}>
          <Toaster />
          {/* A new workspace: every screen reads its data again. */}
          <div key={me.active_workspace?.id ?? 0}>{children}</div>
        </main>
      </div>
    </div>
  );
}
