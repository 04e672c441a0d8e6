/**
 * How the workspace brand shows in the public reader while take-over is on:
 * the logo linked to the website, colors as CSS custom properties (read by
 * client/reader.css under `.branded`), social links beside the share button,
 * and Google Analytics, whose sources the page's CSP then allows.
 */
import type { ReaderBrand } from './brand.service.ts';

function escape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** #rgb / #rrggbb (validated on write) → [r, g, b]. */
function rgb(hex: string): [number, number, number] {
  const h = hex.length === 4 ? hex.slice(1).split('').map((c) => c + c).join('') : hex.slice(1);
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}

function luminance(hex: string): number {
  const [r, g, b] = rgb(hex).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** The text color that reads best on `background` (WCAG contrast), so any brand color stays legible. */
export function readableOn(background: string): string {
  const l = luminance(background);
  const onWhite = 1.05 / (l + 0.05);
  const onDark = (l + 0.05) / (luminance('#111111') + 0.05);
  return onWhite >= onDark ? '#ffffff' : '#111111';
}

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;

/** Custom properties for the nonce'd <style>: primary colors the bars, secondary is the accent, tertiary the area behind the pages. */
export function brandCss(brand: ReaderBrand | null): string {
  if (!brand) return '';
  const vars: string[] = [];
  const { primary, secondary, tertiary } = brand.colors;
  if (primary && HEX.test(primary)) vars.push(`--brand-bar:${primary}`, `--brand-bar-fg:${readableOn(primary)}`);
  if (secondary && HEX.test(secondary)) vars.push(`--brand-accent:${secondary}`, `--brand-accent-fg:${readableOn(secondary)}`);
  if (tertiary && HEX.test(tertiary)) vars.push(`--brand-stage:${tertiary}`);
  return vars.length > 0 ? `:root{${vars.join(';')}}` : '';
}

/** What the page's Content-Security-Policy must add for the brand: Google Analytics only when a measurement id is set. */
export interface CspSources {
  script: string[];
  connect: string[];
  img: string[];
}

export function brandCspSources(brand: ReaderBrand | null): CspSources | null {
  if (!brand?.googleAnalytics) return null;
  // Google's documented sources for gtag.js (https://developers.google.com/tag-platform/security/guides/csp).
  return {
    script: ['https://www.googletagmanager.com'],
    connect: ['https://*.google-analytics.com', 'https://*.analytics.google.com', 'https://*.googletagmanager.com'],
    img: ['https://*.google-analytics.com', 'https://*.googletagmanager.com'],
  };
}

/** gtag.js and its configuration, nonce'd (the only inline script the reader ever has, and only with a measurement id). */
export function analyticsScripts(brand: ReaderBrand | null, nonce: string): string {
  const id = brand?.googleAnalytics;
  if (!id) return '';
  return (
    `<script async src="https://www.googletagmanager.com/gtag/js?id=${encodeURIComponent(id)}" nonce="${nonce}"></script>` +
    `<script nonce="${nonce}">window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());gtag('config',${JSON.stringify(id)});</script>`
  );
}

/** The logo (or the company name) at the start of the top bar, linked to the website when there is one. */
export function brandMark(brand: ReaderBrand): string {
  const name = escape(brand.companyName);
  const inner = brand.logo
    ? `<img src="${escape(brand.logo.url)}" alt="${name}"${brand.logo.width && brand.logo.height ? ` width="${brand.logo.width}" height="${brand.logo.height}"` : ''} decoding="async">`
    : `<span class="brand-name">${name}</span>`;
  return brand.websiteUrl
    ? `<a class="brand-mark" href="${escape(brand.websiteUrl)}" target="_blank" rel="noopener">${inner}<span class="visually-hidden"> (opens ${name}'s website in a new tab)</span></a>`
    : `<span class="brand-mark">${inner}</span>`;
}

const SOCIAL_ICONS: Record<ReaderBrand['social'][number]['network'], { label: string; path: string }> = {
  twitter: { label: 'X (Twitter)', path: 'M4 4l16 16M20 4 4 20' },
  linkedin: { label: 'LinkedIn', path: 'M16 8a6 6 0 0 1 6 6v7h-4v-7a2 2 0 0 0-4 0v7h-4v-7a6 6 0 0 1 6-6zM2 9h4v12H2zM4 2a2 2 0 1 1 0 4 2 2 0 0 1 0-4z' },
  facebook: { label: 'Facebook', path: 'M18 2h-3a5 5 0 0 0-5 5v3H7v4h3v8h4v-8h3l1-4h-4V7a1 1 0 0 1 1-1h3z' },
  youtube: {
    label: 'YouTube',
    path: 'M22.5 6.4a2.8 2.8 0 0 0-1.9-2C18.9 4 12 4 12 4s-6.9 0-8.6.5a2.8 2.8 0 0 0-1.9 2A29 29 0 0 0 1 11.8a29 29 0 0 0 .5 5.3A2.8 2.8 0 0 0 3.4 19c1.7.5 8.6.5 8.6.5s6.9 0 8.6-.5a2.8 2.8 0 0 0 1.9-2 29 29 0 0 0 .5-5.2 29 29 0 0 0-.5-5.4zM9.8 15l5.7-3.2-5.7-3.3z',
  },
  instagram: { label: 'Instagram', path: 'M7 2h10a5 5 0 0 1 5 5v10a5 5 0 0 1-5 5H7a5 5 0 0 1-5-5V7a5 5 0 0 1 5-5zM16 11.4A4 4 0 1 1 12.6 8a4 4 0 0 1 3.4 3.4zM17.5 6.5h.01' },
  pinterest: { label: 'Pinterest', path: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zM10 21l2.5-10M10.5 14.5A3.5 3.5 0 1 0 9 9' },
};

/** The brand's social profiles as toolbar links, placed beside the share button. */
export function socialLinks(brand: ReaderBrand): string[] {
  return brand.social.map(({ network, url }) => {
    const { label, path } = SOCIAL_ICONS[network];
    const title = `${brand.companyName} on ${label}`;
    return (
      `<a class="btn social" data-network="${network}" href="${escape(url)}" target="_blank" rel="noopener" aria-label="${escape(title)} (opens in a new tab)" title="${escape(title)}">` +
      `<svg aria-hidden="true" focusable="false" viewBox="0 0 24 24"><path d="${path}"/></svg></a>`
    );
  });
}
