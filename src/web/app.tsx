/**
 * The application's routes. Signed-out screens (sign-in, the link from the
 * e-mail, an invitation) stand alone; every other address is a signed-in
 * screen inside the shell, and a signed-out visit goes to sign-in and comes
 * back after. Each screen is its own chunk, loaded when first shown, so a
 * new screen is one more line here.
 */
import { LocationProvider, Route, Router, useLocation } from 'preact-iso/router';
import lazy, { ErrorBoundary } from 'preact-iso/lazy';
import { PublicLayout, SignedIn } from './shell/gate.tsx';
import { Shell } from './shell/shell.tsx';
import { NotFound } from './shell/not-found.tsx';

const SignIn = lazy(() => import('./sign-in/sign-in.tsx'));
const VerifyLink = lazy(() => import('./sign-in/verify.tsx'));
const AcceptInvitation = lazy(() => import('./sign-in/accept-invitation.tsx'));
const Home = lazy(() => import('./shell/home.tsx'));
const Profile = lazy(() => import('./settings/profile.tsx'));
const Sessions = lazy(() => import('./settings/sessions.tsx'));
const Members = lazy(() => import('./settings/members.tsx'));
const ApiKeys = lazy(() => import('./settings/api-keys.tsx'));
const ConnectedApps = lazy(() => import('./settings/connected-apps.tsx'));
const OAuthApps = lazy(() => import('./settings/oauth-apps.tsx'));
const OAuthConsent = lazy(() => import('./oauth/consent.tsx'));
const OAuthDevice = lazy(() => import('./oauth/device.tsx'));
// Publishing (issue 26): books, upload, a book's page.
const Books = lazy(() => import('./books/books.tsx'));
const BookPage = lazy(() => import('./books/book.tsx'));
const Upload = lazy(() => import('./upload/upload.tsx'));
const ReaderSettings = lazy(() => import('./books/reader-settings.tsx'));
const Share = lazy(() => import('./share/share.tsx'));
const Access = lazy(() => import('./share/access.tsx'));
const LeadForm = lazy(() => import('./share/lead-form.tsx'));
const Webhooks = lazy(() => import('./webhooks/webhooks.tsx'));
const Brand = lazy(() => import('./brand/brand.tsx'));
const BulkSettings = lazy(() => import('./books/bulk-settings.tsx'));
const Catalogs = lazy(() => import('./catalogs/catalogs.tsx'));
// Analytics (issue 27): the screens live in src/web/analytics/.
const AnalyticsOverview = lazy(() => import('./analytics/overview.tsx'));
const BookAnalytics = lazy(() => import('./analytics/book.tsx'));

// A mailed link exchanges its token and goes home: fetch home's chunk meanwhile.
if (/^\/app\/(sign-in\/verify|invitations\/accept)\/?$/.test(location.pathname)) void Home.preload();
// Opened on an analytics address: fetch its chunk while GET /v1/account is read, not after (bench:analytics-screens' timeline).
if (/^\/app\/analytics\/books\//.test(location.pathname)) void BookAnalytics.preload();
else if (/^\/app\/analytics\/?$/.test(location.pathname)) void AnalyticsOverview.preload();

/** Addresses that need no session. */
const PUBLIC_PATHS = ['/app/sign-in', '/app/sign-in/verify', '/app/invitations/accept'];

function Screens() {
  const { path } = useLocation();
  if (PUBLIC_PATHS.includes(path)) {
    return (
      <PublicLayout>
        <Router>
          <Route path="/app/sign-in" component={SignIn} />
          <Route path="/app/sign-in/verify" component={VerifyLink} />
          <Route path="/app/invitations/accept" component={AcceptInvitation} />
        </Router>
      </PublicLayout>
    );
  }
  return (
    <SignedIn>
      <Shell>
        <Router>
          <Route path="/app" component={Home} />
          <Route path="/app/settings/profile" component={Profile} />
          <Route path="/app/settings/sessions" component={Sessions} />
          <Route path="/app/settings/members" component={Members} />
          <Route path="/app/settings/api-keys" component={ApiKeys} />
          <Route path="/app/settings/connected-apps" component={ConnectedApps} />
          <Route path="/app/settings/oauth-apps" component={OAuthApps} />
          <Route path="/app/oauth/consent" component={OAuthConsent} />
          <Route path="/app/oauth/device" component={OAuthDevice} />
          {/* Publishing (issue 26) */}
          <Route path="/app/books" component={Books} />
          <Route path="/app/books/:bookId" component={BookPage} />
          <Route path="/app/books/:bookId/settings" component={ReaderSettings} />
          <Route path="/app/books/:bookId/share" component={Share} />
          <Route path="/app/books/:bookId/access" component={Access} />
          <Route path="/app/books/:bookId/lead-form" component={LeadForm} />
          <Route path="/app/upload" component={Upload} />
          <Route path="/app/webhooks" component={Webhooks} />
          <Route path="/app/brand" component={Brand} />
          <Route path="/app/bulk-settings" component={BulkSettings} />
          <Route path="/app/catalogs" component={Catalogs} />
          {/* Analytics (issue 27) */}
          <Route path="/app/analytics" component={AnalyticsOverview} />
          <Route path="/app/analytics/books/:id" component={BookAnalytics} />
          <Route default component={NotFound} />
        </Router>
      </Shell>
    </SignedIn>
  );
}

export function App() {
  return (
    <LocationProvider scope="/app">
      <ErrorBoundary>
        <Screens />
      </ErrorBoundary>
    </LocationProvider>
  );
}
