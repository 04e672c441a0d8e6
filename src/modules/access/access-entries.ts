/**
 * Reading what people type into access lists and embed-domain lists: an
 * address, a domain ("example.com", "@example.com"), or for embed domains a
 * pasted URL ("https://shop.example.com/catalog" → "shop.example.com").
 * Everything is lower-cased and internationalised names become punycode, so
 * one entry has one spelling.
 */

export type EntryType = 'email' | 'domain';

export interface AccessEntry {
  type: EntryType;
  value: string;
}

const LOCAL_PART = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/;
/** Labels of 1-63 letters, digits and inner hyphens; a top-level label that is not all digits. */
const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?|xn--[a-z0-9-]{1,59})$/;

/** A host name in canonical form, or null when the input is not one (IP addresses are not). */
export function canonicalHost(input: string): string | null {
  let host = input.trim().toLowerCase().replace(/\.$/, '');
  if (!host || host.length > 253) return null;
  if (host.startsWith('*.')) host = host.slice(2);
  try {
    // The URL parser applies IDNA (punycode) and rejects malformed names.
    host = new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
  if (host === 'localhost') return host;
  return HOSTNAME.test(host) ? host : null;
}

/** The host of a pasted URL or a bare host (ports, paths and credentials dropped). */
export function hostOf(input: string): string | null {
  const trimmed = input.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    try {
      const url = new URL(trimmed);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
      return canonicalHost(url.hostname);
    } catch {
      return null;
    }
  }
  // "shop.example.com/catalog", "shop.example.com:8443", "//shop.example.com"
  const bare = trimmed.replace(/^\/\//, '').split(/[/?#]/)[0]!.replace(/:\d+$/, '');
  return canonicalHost(bare);
}

export function canonicalEmail(input: string): string | null {
  const value = input.trim().toLowerCase();
  const at = value.lastIndexOf('@');
  if (at <= 0 || value.length > 255) return null;
  const local = value.slice(0, at);
  const domain = canonicalHost(value.slice(at + 1));
  if (!LOCAL_PART.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..') || !domain) return null;
  return `${local}@${domain}`;
}

/**
 * One access-list entry. Without `type`, an input with a local part
 * ("ann@example.com") is an address and anything else a domain. With
 * `type: 'domain'`, an address stands for its domain.
 */
export function parseAccessEntry(input: string, type?: EntryType): AccessEntry | { error: string } {
  const value = input.trim();
  const looksLikeAddress = /^[^@\s]+@[^@\s]+$/.test(value);
  const wanted: EntryType = type ?? (looksLikeAddress ? 'email' : 'domain');
  if (wanted === 'email') {
    const email = canonicalEmail(value);
    return email ? { type: 'email', value: email } : { error: `"${clip(value)}" is not a valid e-mail address.` };
  }
  const domain = canonicalHost(value.slice(value.lastIndexOf('@') + 1));
  return domain ? { type: 'domain', value: domain } : { error: `"${clip(value)}" is not a valid domain (for example example.com).` };
}

/** Whether an address is admitted by a list: listed itself, or its domain or a parent domain listed. */
export function entriesAdmit(entries: readonly AccessEntry[], email: string): boolean {
  const address = canonicalEmail(email);
  if (!address) return false;
  const domain = address.slice(address.indexOf('@') + 1);
  return entries.some((e) => (e.type === 'email' ? e.value === address : domain === e.value || domain.endsWith(`.${e.value}`)));
}

/** The domains an address's own domain falls under (itself and its parents), for an indexed lookup. */
export function domainCandidates(email: string): string[] {
  const domain = email.slice(email.indexOf('@') + 1);
  const labels = domain.split('.');
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
}

function clip(value: string): string {
  return value.length > 80 ? `${value.slice(0, 77)}…` : value;
}
