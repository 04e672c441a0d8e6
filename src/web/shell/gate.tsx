import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { account, accountProblem, loadAccount } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Toaster } from '../components/toast.tsx';

/** The frame of the signed-out screens: the product's name and one main landmark. */
export function PublicLayout({ children }: { children: ComponentChildren }) {
  return (
    <div class="public">
      <header class="public-header">
        <a class="brand" href="/app">Flipbook</a>
      </header>
      <main id="main" class="public-main" tabIndex={-1}>
        <Toaster />
        {children}
      </main>
    </div>
  );
}

/** Shows its children to a signed-in person; a signed-out visit goes to sign-in, which comes back here after. */
export function SignedIn({ children }: { children: ComponentChildren }) {
  const { url, route } = useLocation();
  const current = account.value;
  useEffect(() => {
    if (current === null) route(`/app/sign-in?next=${encodeURIComponent(url)}`, true);
    else if (current === undefined && !accountProblem.value) void loadAccount();
  }, [current, url, route]);
  if (accountProblem.value) {
    return (
      <PublicLayout>
        <Page title="Flipbook is not available">
          <ErrorMessage problem={accountProblem.value} />
          <Button variant="primary" onClick={() => void loadAccount()}>Try again</Button>
        </Page>
      </PublicLayout>
    );
  }
  if (!current) {
    return (
      <PublicLayout>
        <Loading what="your account" />
      </PublicLayout>
    );
  }
  return <>{children}</>;
}
