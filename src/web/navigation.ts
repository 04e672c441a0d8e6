/**
 * Where to go after signing in: the address a signed-out visit asked for,
 * when it is one of the application's own (never another site, never back
 * to sign-in), else home.
 */
export function safeNext(next: string | null | undefined): string {
  if (!next || !/^\/app(\/|\?|$)/.test(next) || next.startsWith('/app/sign-in')) return '/app';
  // "/app/../x" or "/app\\evil" could leave the application once the browser resolves it.
  if (/(^|\/)\.\.?(\/|$)|\\/.test(next.split('?')[0]!)) return '/app';
  return next;
}
