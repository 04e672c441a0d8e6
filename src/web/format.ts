/** Dates, waits and devices in words. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDateTime(iso: string | null | undefined, none = 'Never'): string {
  return iso ? dateTime.format(new Date(iso)) : none;
}

export function formatDate(iso: string | null | undefined, none = 'Never'): string {
  return iso ? dateOnly.format(new Date(iso)) : none;
}

/** "about 59 minutes", "12 seconds", "2 hours". */
export function waitInWords(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 60) return plural(Math.max(1, Math.ceil(seconds)), 'second');
  if (seconds < 3600) return plural(Math.ceil(seconds / 60), 'minute');
  return `about ${plural(Math.round(seconds / 3600), 'hour')}`;
}

/** "Chrome on Linux" from a user agent; the agent itself when it is not recognised. */
export function deviceName(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent) ? 'Edge'
    : /Firefox\//.test(userAgent) ? 'Firefox'
    : /(Chrome|Chromium)\//.test(userAgent) ? (/HeadlessChrome/.test(userAgent) ? 'Headless Chrome' : 'Chrome')
    : /Safari\//.test(userAgent) ? 'Safari' : null;
  const system = /Android/.test(userAgent) ? 'Android'
    : /iPhone|iPad/.test(userAgent) ? 'iOS'
    : /Windows/.test(userAgent) ? 'Windows'
    : /Mac OS X/.test(userAgent) ? 'macOS'
    : /Linux/.test(userAgent) ? 'Linux' : null;
  if (!browser) return userAgent.length > 60 ? `${userAgent.slice(0, 57)}…` : userAgent;
  return system ? `${browser} on ${system}` : browser;
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
