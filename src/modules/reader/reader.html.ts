/**
 * Server-rendered HTML of the reader: the reader page (toolbar, cover, panels,
 * page text, metadata for search engines and link previews) and the notice
 * pages (not found, gone, unavailable). The browser code in client/ takes the
 * page over; nothing here runs script inline, so the CSP stays strict (the
 * one exception: a brand's Google Analytics snippet, nonce'd, and only when
 * take-over is on with a measurement id).
 */
import { analyticsScripts, brandCss, brandMark, socialLinks } from '../brand/brand.reader.ts';
import type { OutlineEntry } from '../conversion/conversion.types.ts';
import type { ReaderBook, ReaderContent } from './reader.service.ts';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON safe inside a <script> element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const ICONS = {
  toc: 'M8 6h13M8 12h13M8 18h13M3 6h.01M3 12h.01M3 18h.01',
  thumbs: 'M3 3h7v7H3zM14 3h7v7h-7zM14 14h7v7h-7zM3 14h7v7H3z',
  search: 'M11 19a8 8 0 1 0 0-16 8 8 0 0 0 0 16zM21 21l-4.35-4.35',
  text: 'M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8zM14 2v6h6M16 13H8M16 17H8M10 9H8',
  share: 'M18 8a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM6 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM18 22a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM8.6 13.5l6.8 4M15.4 6.5l-6.8 4',
  download: 'M21 15v4a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2v-4M7 10l5 5 5-5M12 15V3',
  fullscreen: 'M8 3H5a2 2 0 0 0-2 2v3M21 8V5a2 2 0 0 0-2-2h-3M3 16v3a2 2 0 0 0 2 2h3M16 21h3a2 2 0 0 0 2-2v-3',
  exitFullscreen: 'M8 3v3a2 2 0 0 1-2 2H3M21 8h-3a2 2 0 0 1-2-2V3M3 16h3a2 2 0 0 1 2 2v3M16 21v-3a2 2 0 0 1 2-2h3',
  soundOn: 'M11 5 6 9H2v6h4l5 4V5zM19 5a10 10 0 0 1 0 14M15.5 8.5a5 5 0 0 1 0 7',
  soundOff: 'M11 5 6 9H2v6h4l5 4V5zM23 9l-6 6M17 9l6 6',
  prev: 'M15 18l-6-6 6-6',
  next: 'M9 18l6-6-6-6',
  close: 'M18 6 6 18M6 6l12 12',
  zoomIn: 'M11 19a8 8 0 1 0 0-16 8 8 0 0 0 0 16zM21 21l-4.35-4.35M11 8v6M8 11h6',
  zoomOut: 'M11 19a8 8 0 1 0 0-16 8 8 0 0 0 0 16zM21 21l-4.35-4.35M8 11h6',
  external: 'M15 3h6v6M10 14 21 3M18 13v6a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2h6',
  spread: 'M2 4h7a3 3 0 0 1 3 3v13a2 2 0 0 0-2-2H2zM22 4h-7a3 3 0 0 0-3 3v13a2 2 0 0 1 2-2h8z',
  play: 'M7 4l13 8-13 8z',
  pause: 'M8 5v14M16 5v14',
  copy: 'M20 9h-9a2 2 0 0 0-2 2v9a2 2 0 0 0 2 2h9a2 2 0 0 0 2-2v-9a2 2 0 0 0-2-2zM5 15H4a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v1',
} as const;

function icon(name: keyof typeof ICONS, cls = ''): string {
  return `<svg${cls ? ` class="${cls}"` : ''} aria-hidden="true" focusable="false" viewBox="0 0 24 24"><path d="${ICONS[name]}"/></svg>`;
}

function button(id: string, label: string, iconName: keyof typeof ICONS, extra = ''): string {
  return `<button type="button" class="btn" id="${id}" aria-label="${escapeHtml(label)}" title="${escapeHtml(label)}"${extra}>${icon(iconName)}</button>`;
}

const CSS_COLOR = /^(#[0-9a-f]{3,8}|(rgb|hsl)a?\([\d\s.,%/+-]+\)|[a-z]{3,30})$/i;
const CSS_GRADIENT = /^(repeating-)?(linear|radial|conic)-gradient\([#\w\s.,%()/+-]+\)$/i;
const IMAGE_URL = /^https?:\/\/[^\s"'()\\<>]+$/i;

/** The book's background as CSS, and the origin its image comes from (for img-src). Anything else is ignored. */
export function backgroundCss(background: string | null, display: string | null): { css: string; imageOrigin: string | null } {
  const value = background?.trim() ?? '';
  if (!value) return { css: '', imageOrigin: null };
  if (CSS_COLOR.test(value) || CSS_GRADIENT.test(value)) {
    const balanced = [...value].reduce((depth, c) => (depth < 0 ? depth : depth + (c === '(' ? 1 : c === ')' ? -1 : 0)), 0) === 0;
    if (!balanced) return { css: '', imageOrigin: null };
    return { css: `.stage{background:${value}}`, imageOrigin: null };
  }
  if (IMAGE_URL.test(value)) {
    const layout = display === 'repeat' ? 'background-repeat:repeat' : 'background-position:center;background-size:cover;background-repeat:no-repeat';
    return { css: `.stage{background-image:url("${value}");${layout}}`, imageOrigin: new URL(value).origin };
  }
  return { css: '', imageOrigin: null };
}

function outlineList(entries: OutlineEntry[], depth = 0): string {
  if (entries.length === 0 || depth > 8) return '';
  const items = entries.map((entry) => {
    const title = escapeHtml(entry.title || 'Untitled');
    let target: string;
    if (entry.page) target = `<a href="#page=${entry.page}" data-page="${entry.page}">${title}<span class="toc-page">${entry.page}</span></a>`;
    else if (entry.url && /^(https?:|mailto:)/i.test(entry.url)) target = `<a href="${escapeHtml(entry.url)}" target="_blank" rel="noopener noreferrer">${title}</a>`;
    else target = `<span>${title}</span>`;
    return `<li>${target}${outlineList(entry.children, depth + 1)}</li>`;
  });
  return `<ul>${items.join('')}</ul>`;
}

function textSection(page: number, text: string, links: boolean): string {
  const body = escapeHtml(text.trim()).replace(/\r?\n/g, '<br>');
  const heading = links ? `<a href="#page=${page}">Page ${page}</a>` : `Page ${page}`;
  return `<section class="tp" aria-labelledby="tp-${page}"><h3 id="tp-${page}">${heading}</h3><p>${body || '<i>No text on this page.</i>'}</p></section>`;
}

export function textSections(texts: { page: number; text: string }[], links = true): string {
  return texts.map((t) => textSection(t.page, t.text, links)).join('');
}

function dialog(id: string, title: string, body: string, cls = ''): string {
  return (
    `<dialog id="${id}" class="panel${cls ? ` ${cls}` : ''}" aria-labelledby="${id}-h">` +
    `<div class="panel-head"><h2 id="${id}-h">${escapeHtml(title)}</h2>` +
    `<button type="button" class="btn close" data-close aria-label="Close" title="Close">${icon('close')}</button></div>` +
    `<div class="panel-body">${body}</div></dialog>`
  );
}

function shareLinks(title: string, url: string): string {
  const u = encodeURIComponent(url);
  const t = encodeURIComponent(title);
  const links: [string, string][] = [
    ['X (Twitter)', `https://twitter.com/intent/tweet?url=${u}&text=${t}`],
    ['Facebook', `https://www.facebook.com/sharer/sharer.php?u=${u}`],
    ['LinkedIn', `https://www.linkedin.com/sharing/share-offsite/?url=${u}`],
  ];
  const items = links.map(([name, href]) => `<li><a class="share-link" href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">Share on ${name}<span class="visually-hidden"> (opens in a new tab)</span></a></li>`);
  items.push(`<li><a class="share-link" href="mailto:?subject=${t}&amp;body=${u}">Share by e-mail</a></li>`);
  return (
    `<ul class="share-list">${items.join('')}</ul>` +
    `<div class="copy-row"><label for="share-url">Link to this flipbook</label>` +
    `<div class="copy-field"><input id="share-url" type="url" readonly value="${escapeHtml(url)}">` +
    `<button type="button" class="textbtn" id="copy-link">${icon('copy')}Copy link</button></div>` +
    `<p id="copy-status" class="status" aria-live="polite"></p></div>`
  );
}

export interface ReaderPageInput {
  book: ReaderBook;
  content: ReaderContent;
  nonce: string;
  scriptUrl: string;
  styleUrl: string;
  bookCss: string;
  downloadUrl: string;
}

export function renderReaderPage(input: ReaderPageInput): string {
  const { book, content, nonce } = input;
  const { settings, row } = book;
  const { data, cover } = content;
  const title = escapeHtml(row.name);
  const description = escapeHtml(content.description);
  const canonical = escapeHtml(data.url);
  const first = data.pages[0];
  const ratio = first ? first.w / first.h : 0.7071;
  const year = (row.publishedDate ?? row.createdAt).getUTCFullYear();
  // Brand take-over: the workspace's brand replaces the service's own (name, badge, colors, logo, analytics).
  const brand = content.brand;
  const publisher = brand?.companyName ?? book.publisher;

  const jsonLd = {
    '@context': 'https://schema.org',
    '@type': 'Book',
    name: row.name,
    description: content.description,
    url: data.url,
    numberOfPages: content.pageCount,
    bookFormat: 'https://schema.org/EBook',
    ...(cover ? { image: cover.url } : {}),
    ...(row.publishedDate ? { datePublished: row.publishedDate.toISOString() } : {}),
    publisher: { '@type': 'Organization', name: publisher },
    ...(settings.downloadable ? { encoding: { '@type': 'MediaObject', encodingFormat: 'application/pdf', contentUrl: `${data.url}/download` } } : {}),
  };

  const meta = [
    `<meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">`,
    `<title>${title}</title>`,
    `<meta name="description" content="${description}">`,
    `<link rel="canonical" href="${canonical}">`,
    `<link rel="icon" href="data:,">`,
    `<meta property="og:type" content="book">`,
    `<meta property="og:site_name" content="${escapeHtml(brand?.companyName ?? 'Flipbook')}">`,
    `<meta property="og:title" content="${title}">`,
    `<meta property="og:description" content="${description}">`,
    `<meta property="og:url" content="${canonical}">`,
    ...(cover
      ? [
          `<meta property="og:image" content="${escapeHtml(cover.url)}">`,
          `<meta property="og:image:width" content="${cover.width}">`,
          `<meta property="og:image:height" content="${cover.height}">`,
          `<meta property="og:image:alt" content="Cover of ${title}">`,
        ]
      : []),
    `<meta name="twitter:card" content="${cover ? 'summary_large_image' : 'summary'}">`,
    `<meta name="twitter:title" content="${title}">`,
    `<meta name="twitter:description" content="${description}">`,
    ...(cover ? [`<meta name="twitter:image" content="${escapeHtml(cover.url)}">`, `<meta name="twitter:image:alt" content="Cover of ${title}">`] : []),
    `<link rel="stylesheet" href="${input.styleUrl}">`,
    `<style nonce="${nonce}">:root{--ratio:${ratio.toFixed(4)}}${brandCss(brand)}${input.bookCss}</style>`,
    `<script src="${input.scriptUrl}" defer></script>`,
    `<script type="application/ld+json">${scriptJson(jsonLd)}</script>`,
    analyticsScripts(brand, nonce),
  ];

  const tools: string[] = [
    button('zoom-out', 'Zoom out', 'zoomOut', ' aria-disabled="true"'),
    button('zoom-in', 'Zoom in', 'zoomIn'),
  ];
  // One page or two (wide screens only; client/main.ts shows it), and the slideshow with its seconds per view.
  tools.push(`<button type="button" class="btn" id="layout" aria-label="Two pages side by side" title="Two pages side by side" aria-pressed="false" hidden>${icon('spread')}</button>`);
  tools.push(`<button type="button" class="btn" id="autoplay" aria-label="Slideshow" title="Slideshow" aria-pressed="false">${icon('play', 'on')}${icon('pause', 'off')}</button>`);
  const seconds = [3, 5, 10, 20, 30, 60];
  if (data.auto && !seconds.includes(data.auto)) seconds.push(data.auto);
  tools.push(`<select id="autoplay-interval" class="interval" aria-label="Seconds per page of the slideshow" title="Seconds per page">` +
    seconds.toSorted((a, b) => a - b).map((s) => `<option value="${s}"${s === (data.auto ?? 5) ? ' selected' : ''}>${s} s</option>`).join('') + `</select>`);
  if (content.outline.length > 0) tools.push(button('open-toc', 'Table of contents', 'toc', ' data-open="dlg-toc" aria-haspopup="dialog"'));
  tools.push(button('open-thumbs', 'Page thumbnails', 'thumbs', ' data-open="dlg-thumbs" aria-haspopup="dialog"'));
  tools.push(button('open-search', 'Search', 'search', ' data-open="dlg-search" aria-haspopup="dialog"'));
  tools.push(button('hit-prev', 'Previous search result', 'prev', ' hidden'), button('hit-next', 'Next search result', 'next', ' hidden'));
  if (settings.accessibility_enabled) tools.push(button('open-text', 'Text view', 'text', ' data-open="dlg-text" aria-haspopup="dialog"'));
  if (settings.share_social_media) tools.push(button('open-share', 'Share', 'share', ' data-open="dlg-share" aria-haspopup="dialog"'));
  if (brand) tools.push(...socialLinks(brand));
  if (settings.downloadable) tools.push(`<a class="btn" id="download" href="${escapeHtml(input.downloadUrl)}" download aria-label="Download PDF" title="Download PDF">${icon('download')}</a>`);
  if (settings.sound_enabled) tools.push(`<button type="button" class="btn" id="sound" aria-label="Page-turn sound" title="Page-turn sound" aria-pressed="true">${icon('soundOn', 'on')}${icon('soundOff', 'off')}</button>`);
  // Shown only inside an embed (client/embed.ts): the book on its own, in a new tab.
  tools.push(`<a class="btn" id="open-full" href="${canonical}" target="_blank" rel="noopener" hidden aria-label="Open the book full screen (new tab)" title="Open full screen">${icon('external')}</a>`);
  if (settings.fullscreen_enabled) tools.push(`<button type="button" class="btn" id="fullscreen" aria-label="Full screen" title="Full screen" aria-pressed="false">${icon('fullscreen', 'on')}${icon('exitFullscreen', 'off')}</button>`);

  // The cover, at once: its smallest rendition (a few KB) as a stand-in, and the sharp one over it, both
  // fetched while the browser parses; the sharp one is picked from the srcset by displayed size × DPR.
  let ssrCover = '';
  if (first && first.i.length > 0) {
    // Zoom renditions are for the reader's zoom, not the cover's first paint.
    const cover = first.i.filter((r) => r[3] !== 2);
    const largest = cover[cover.length - 1]!;
    const smallest = cover[0]!;
    const middle = cover[Math.min(1, cover.length - 1)]!;
    const srcset = cover.map(([w, , s]) => `${escapeHtml(data.img + s)} ${w}w`).join(', ');
    const sizes = `min(100vw, calc((100vh - 112px) * ${ratio.toFixed(4)}))`;
    const lo = cover.length > 1
      ? `<img class="ssr-lo" alt="Page 1" src="${escapeHtml(data.img + smallest[2])}" width="${smallest[0]}" height="${smallest[1]}" fetchpriority="high" draggable="false">`
      : '';
    ssrCover =
      `<div class="view ssr"><div class="ssr-box">${lo}<img class="ssr-img" data-page="1" alt="${lo ? '' : 'Page 1'}" src="${escapeHtml(data.img + middle[2])}" srcset="${srcset}" sizes="${sizes}" ` +
      `width="${largest[0]}" height="${largest[1]}" decoding="async" draggable="false"${lo ? ' aria-hidden="true"' : ' fetchpriority="high"'}></div></div>`;
  }

  const texts = textSections(content.texts, settings.accessibility_enabled);
  const more = data.textUntil < content.pageCount
    ? `<p class="more"><button type="button" class="textbtn" id="text-more" data-from="${data.textUntil + 1}">Load the text of more pages</button></p>`
    : '';

  const dialogs: string[] = [];
  if (content.outline.length > 0) dialogs.push(dialog('dlg-toc', 'Table of contents', `<nav class="toc" aria-label="Table of contents">${outlineList(content.outline)}</nav>`));
  dialogs.push(dialog('dlg-thumbs', 'Pages', '<ol class="thumbs" id="thumbs"></ol>', 'wide'));
  dialogs.push(
    dialog(
      'dlg-search',
      'Search',
      `<form id="search-form" class="search-form" role="search"><label class="visually-hidden" for="search-q">Search the text of this flipbook</label>` +
        `<input id="search-q" name="q" type="search" maxlength="200" autocomplete="off" placeholder="Search this flipbook">` +
        `<button type="submit" class="textbtn">Search</button></form>` +
        `<p id="search-status" class="status" aria-live="polite"></p><ol id="search-results" class="results"></ol>` +
        `<p class="more"><button type="button" class="textbtn" id="search-more" hidden>Show more results</button></p>`,
    ),
  );
  if (settings.accessibility_enabled) dialogs.push(dialog('dlg-text', 'Text view', `<div class="text-view" id="text-view">${texts}</div>${more}`, 'wide'));
  if (settings.share_social_media) dialogs.push(dialog('dlg-share', 'Share', shareLinks(row.name, data.url)));

  const footer = [
    settings.copyright_enabled ? `<p class="copyright">© ${year} ${escapeHtml(publisher)}. All rights reserved.</p>` : '<span class="spacer"></span>',
    `<nav class="pager" aria-label="Page navigation">` +
      button('prev', 'Previous page', 'prev') +
      `<form id="goto" class="goto"><input id="page-input" aria-label="Page number" value="1" inputmode="numeric" autocomplete="off" size="5">` +
      `<span id="page-count">of ${content.pageCount}</span></form>` +
      button('next', 'Next page', 'next') +
      `</nav>`,
    settings.made_with_badge_enabled && !brand ? `<p class="badge">Made with <strong>Flipbook</strong></p>` : '<span class="spacer"></span>',
  ];

  return (
    `<!doctype html><html lang="en"><head>${meta.join('')}</head><body${brand ? ' class="branded"' : ''}>` +
    `<div class="reader" id="reader">` +
    `<header class="bar top">${brand ? brandMark(brand) : ''}<h1 class="title">${title}</h1><div class="tools" role="group" aria-label="Reader tools">${tools.join('')}</div></header>` +
    `<main class="stage" id="stage" tabindex="-1" aria-label="Pages of ${title}">${ssrCover}` +
    (settings.accessibility_enabled ? '' : `<div class="visually-hidden">${textSections(content.texts, false)}</div>`) +
    `</main>` +
    `<footer class="bar bottom">${footer.join('')}</footer>` +
    `<p id="announcer" class="visually-hidden" aria-live="polite" aria-atomic="true"></p>` +
    `</div>${dialogs.join('')}` +
    `<script type="application/json" id="reader-data">${scriptJson(data)}</script>` +
    `</body></html>`
  );
}

export const NOTICE_CSS =
  'html,body{margin:0;height:100%}body{display:flex;align-items:center;justify-content:center;background:#f3f3f5;color:#1b1b1f;' +
  'font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}main{max-width:34rem;margin:1rem;padding:2rem;background:#fff;' +
  'border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.12)}h1{font-size:1.4rem;margin:0 0 .5rem}p{margin:.5rem 0 0}.book{color:#4a4a55}';

/** A small standalone page for 404, 410 and other notices. */
export function renderNoticePage(input: { nonce: string; title: string; message: string; bookName?: string }): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>${escapeHtml(input.title)}</title><style nonce="${input.nonce}">${NOTICE_CSS}</style></head>` +
    `<body><main><h1>${escapeHtml(input.title)}</h1>` +
    (input.bookName ? `<p class="book">${escapeHtml(input.bookName)}</p>` : '') +
    `<p>${escapeHtml(input.message)}</p></main></body></html>`
  );
}
