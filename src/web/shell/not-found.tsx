import { Page } from '../components/page.tsx';

export function NotFound() {
  return (
    <Page title="Page not found">
      <p>There is no page at this address. <a href="/app">Go to the home page</a>.</p>
    </Page>
  );
}
