/**
 * Product feeds imported from a catalog's `source_url`. Each format is read
 * by a well-kept parser (fast-xml-parser for XML, csv-parse for CSV/TSV) and
 * turned into the same `field=value` strings as the API's items, so one
 * parser (item-input.ts) checks everything that becomes an item.
 *
 * Formats, recognised from the content (not the URL or the catalog's source):
 *  - Google Merchant Center: RSS 2.0 or Atom XML with the g: namespace, and
 *    the tab- or comma-separated file with the same attribute names;
 *  - WooCommerce: the public Store API (/wp-json/wc/store/v1/products, prices
 *    in minor units) and the REST API (/wp-json/wc/v3/products); paged URLs
 *    are followed page by page (per_page=100) up to the item cap;
 *  - Shopify's public /products.json (one item per variant);
 *  - plain JSON (an array of objects, or { items: [...] }) and plain CSV whose
 *    columns are the item fields (external_item_key, title, price, …).
 *
 * Every request goes through the SSRF-safe outbound client with a deadline
 * and a size cap; the item count is capped too.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import type { OutboundClient } from '../../platform/outbound/outbound-client.ts';
import { OutboundRequestError } from '../../platform/outbound/outbound-client.ts';

export interface FeedLimits {
  maxBytes: number;
  maxItems: number;
  timeoutMs: number;
}

/**
 * What the catalog adds to a feed: WooCommerce's REST API and Shopify's
 * products.json name no currency, so their prices take the catalog's
 * (a `currency=EUR` entry in its metadata); without one such items are
 * refused, since a price without its currency is not a price.
 */
export interface FeedContext {
  currency: string | null;
}

/** One feed entry as item strings, and the entry as read (kept as raw_payload). */
export interface FeedEntry {
  strings: string[];
  raw: unknown;
}

export interface FeedResult {
  format: 'merchant_xml' | 'merchant_csv' | 'woocommerce_store' | 'woocommerce_rest' | 'shopify_products' | 'json' | 'csv';
  entries: FeedEntry[];
  /** True when the feed had more entries than maxItems (only the first maxItems are kept). */
  truncated: boolean;
}

/** A feed that could not be read; the message is shown in the sync job and the catalog's last_sync_error. */
export class FeedError extends Error {
  override name = 'FeedError';
}

type Obj = Record<string, unknown>;

const str = (v: unknown): string | null => {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v.trim() || null;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'object' && '#text' in (v as Obj)) return str((v as Obj)['#text']);
  return null;
};
const list = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

function push(out: string[], field: string, value: unknown): void {
  const s = str(value);
  if (s !== null) out.push(`${field}=${s}`);
}

/** "1999" with 2 minor units → "19.99", by string arithmetic (never floats). */
export function fromMinorUnits(minor: string, units: number): string | null {
  if (!/^-?\d+$/.test(minor)) return null;
  if (units <= 0) return minor;
  const padded = minor.padStart(units + 1, '0');
  return `${padded.slice(0, -units)}.${padded.slice(-units)}`;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#039': "'", apos: "'", '#8211': '–', '#8217': '’', '#8220': '“', '#8221': '”', nbsp: ' ' };
/** WooCommerce names come HTML-escaped ("Tee &amp; cap"). */
function unescapeHtml(s: string | null): string | null {
  return s === null ? null : s.replace(/&(#?\w+);/g, (m, e: string) => ENTITIES[e.toLowerCase()] ?? m);
}

// ---------------------------------------------------------------------------
// Google Merchant Center (XML and CSV/TSV): one attribute vocabulary.

const MERCHANT_AVAILABILITY: Record<string, string> = { in_stock: 'in_stock', 'in stock': 'in_stock', out_of_stock: 'out_of_stock', 'out of stock': 'out_of_stock', preorder: 'preorder', backorder: 'backorder' };
const MERCHANT_ATTRIBUTES = ['brand', 'gtin', 'mpn', 'condition', 'color', 'size', 'gender', 'age_group', 'material', 'pattern', 'google_product_category', 'custom_label_0', 'custom_label_1'];

/** A Merchant Center product (attribute name → value(s)) as item strings. */
function merchantEntry(p: Obj, link?: string | null): string[] {
  const out: string[] = [];
  const id = str(p.id);
  push(out, 'external_item_key', id);
  const group = str(p.item_group_id);
  if (group) {
    push(out, 'external_product_id', group);
    push(out, 'external_variant_id', id);
  }
  push(out, 'title', p.title);
  push(out, 'description', p.description);
  push(out, 'url', link ?? p.link);
  push(out, 'image', p.image_link);
  for (const extra of list(p.additional_image_link)) {
    // The CSV form lists several in one cell, comma-separated.
    for (const url of (str(extra) ?? '').split(/,(?=\s*https?:)/)) push(out, 'gallery', url);
  }
  const price = str(p.price);
  const sale = str(p.sale_price);
  if (price) push(out, 'regular_price', price);
  if (sale) push(out, 'sale_price', sale);
  if (sale ?? price) push(out, 'price', sale ?? price);
  const availability = str(p.availability);
  if (availability) push(out, 'stock_status', MERCHANT_AVAILABILITY[availability.toLowerCase()] ?? availability);
  const types = list(p.product_type).map(str).filter((t): t is string => t !== null);
  if (types[0]) push(out, 'product_type', types[0]);
  for (const type of types) push(out, 'categories', type);
  push(out, 'sku', p.mpn);
  for (const name of MERCHANT_ATTRIBUTES) {
    for (const value of list(p[name])) push(out, `payload.${name}`, value);
  }
  return out;
}

function parseMerchantXml(body: string, maxItems: number): FeedResult {
  const parser = new XMLParser({
    removeNSPrefix: true,
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    isArray: (name) => ['item', 'entry', 'additional_image_link', 'product_type', 'link'].includes(name),
    processEntities: true,
  });
  let doc: Obj;
  try {
    doc = parser.parse(body) as Obj;
  } catch (error) {
    throw new FeedError(`The feed is not well-formed XML: ${(error as Error).message.slice(0, 200)}`);
  }
  const rss = doc.rss as Obj | undefined;
  const channel = rss ? (list(rss.channel)[0] as Obj | undefined) : undefined;
  const feed = doc.feed as Obj | undefined;
  const items = channel ? list(channel.item) : feed ? list(feed.entry) : null;
  if (!items) throw new FeedError('The XML is neither an RSS 2.0 (rss/channel/item) nor an Atom (feed/entry) product feed.');
  const entries = items.slice(0, maxItems).map((raw) => {
    const p = raw as Obj;
    // RSS: <link>url</link>; Atom: <link href="url"/>. The g:link attribute, when present, is the same list.
    const links = list(p.link).map((l) => (typeof l === 'object' && l !== null ? str((l as Obj)['@_href']) : str(l)));
    return { strings: merchantEntry(p, links.find(Boolean) ?? null), raw: p };
  });
  return { format: 'merchant_xml', entries, truncated: items.length > maxItems };
}

// ---------------------------------------------------------------------------
// CSV / TSV

function parseDelimited(body: string, maxItems: number): FeedResult {
  const firstLine = body.slice(0, body.indexOf('\n') === -1 ? body.length : body.indexOf('\n'));
  const delimiter = firstLine.includes('\t') ? '\t' : firstLine.split(';').length > firstLine.split(',').length ? ';' : ',';
  let records: Obj[];
  try {
    records = parseCsv(body, {
      columns: (header: string[]) => header.map((h) => h.trim().replace(/^\uFEFF/, '')),
      delimiter,
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      relax_quotes: delimiter === '\t',
      quote: delimiter === '\t' ? false : '"',
      to: maxItems + 1,
    }) as Obj[];
  } catch (error) {
    throw new FeedError(`The CSV could not be read: ${(error as Error).message.slice(0, 200)}`);
  }
  const header = Object.keys(records[0] ?? {});
  const truncated = records.length > maxItems;
  records = records.slice(0, maxItems);
  if (header.includes('external_item_key')) {
    return { format: 'csv', entries: records.map((r) => ({ strings: plainEntry(r, true), raw: r })), truncated };
  }
  // Merchant Center headers: "id", "image_link" or "image link", sometimes "g:id".
  const merchantName = (h: string) => h.toLowerCase().replace(/^g:/, '').replace(/\s+/g, '_');
  if (header.map(merchantName).includes('id')) {
    const entries = records.map((r) => {
      const p: Obj = {};
      for (const [k, v] of Object.entries(r)) p[merchantName(k)] = v;
      return { strings: merchantEntry(p), raw: r };
    });
    return { format: 'merchant_csv', entries, truncated };
  }
  throw new FeedError('The CSV has neither an external_item_key column (plain CSV) nor an id column (Merchant Center).');
}

// ---------------------------------------------------------------------------
// JSON: WooCommerce, Shopify, plain

/** An object whose keys are item fields; list fields as arrays (CSV: "|"-separated), payload as an object or payload.<name> keys. */
function plainEntry(o: Obj, fromCsv = false): string[] {
  const out: string[] = [];
  for (const [field, value] of Object.entries(o)) {
    if (value === null || value === undefined || value === '') continue;
    if (field === 'payload' && typeof value === 'object' && !Array.isArray(value)) {
      for (const [name, v] of Object.entries(value as Obj)) push(out, `payload.${name}`, v);
    } else if (Array.isArray(value)) {
      for (const v of value) push(out, field, v);
    } else if (fromCsv && ['gallery', 'categories', 'availability'].includes(field) && typeof value === 'string') {
      for (const v of value.split('|')) push(out, field, v);
    } else {
      push(out, field, value);
    }
  }
  return out;
}

/** The product identity and text both WooCommerce APIs share (they differ in how the parent is named and in prices). */
function wooProductFields(out: string[], p: Obj, parent: string | null): void {
  const id = str(p.id);
  push(out, 'external_item_key', id);
  if (parent && parent !== '0') {
    push(out, 'external_product_id', parent);
    push(out, 'external_variant_id', id);
  }
  push(out, 'sku', p.sku);
  push(out, 'title', unescapeHtml(str(p.name)));
  push(out, 'url', p.permalink);
  push(out, 'description', p.description);
  push(out, 'short_description', p.short_description);
  push(out, 'product_type', p.type);
}

function wooStoreEntry(p: Obj): string[] {
  const out: string[] = [];
  wooProductFields(out, p, str(p.parent));
  const prices = (p.prices ?? {}) as Obj;
  const units = Number(prices.currency_minor_unit ?? 2);
  for (const field of ['price', 'regular_price', 'sale_price'] as const) {
    const minor = str(prices[field]);
    if (minor) push(out, field, fromMinorUnits(minor, Number.isInteger(units) ? units : 2));
  }
  push(out, 'currency', prices.currency_code);
  const images = list(p.images).map((i) => str((i as Obj).src)).filter(Boolean);
  push(out, 'image', images[0]);
  for (const src of images.slice(1)) push(out, 'gallery', src);
  for (const c of list(p.categories)) push(out, 'categories', unescapeHtml(str((c as Obj).name)));
  if (typeof p.is_in_stock === 'boolean') {
    push(out, 'available', p.is_in_stock && p.is_purchasable !== false);
    push(out, 'stock_status', p.is_on_backorder === true ? 'backorder' : p.is_in_stock ? 'in_stock' : 'out_of_stock');
  }
  const remaining = str(p.low_stock_remaining);
  if (remaining) push(out, 'stock_quantity', remaining);
  return out;
}

const WOO_STATUS: Record<string, string> = { publish: 'active', draft: 'draft', pending: 'draft', private: 'draft', future: 'draft', trash: 'archived' };

function wooRestEntry(p: Obj, context: FeedContext): string[] {
  const out: string[] = [];
  push(out, 'currency', context.currency);
  wooProductFields(out, p, str(p.parent_id));
  push(out, 'status', WOO_STATUS[str(p.status) ?? ''] ?? 'active');
  for (const field of ['price', 'regular_price', 'sale_price'] as const) push(out, field, p[field]);
  const images = list(p.images).map((i) => str((i as Obj).src)).filter(Boolean);
  push(out, 'image', images[0]);
  for (const src of images.slice(1)) push(out, 'gallery', src);
  for (const c of list(p.categories)) push(out, 'categories', unescapeHtml(str((c as Obj).name)));
  push(out, 'stock_status', p.stock_status);
  if (typeof p.stock_quantity === 'number') push(out, 'stock_quantity', p.stock_quantity);
  for (const a of list(p.attributes)) {
    const attr = a as Obj;
    const options = list(attr.options).map(str).filter(Boolean).join(', ') || str(attr.option);
    if (str(attr.name) && options) push(out, `payload.${str(attr.name)}`, options);
  }
  return out;
}

/** Shopify /products.json: one entry per variant (raw is the variant with its product's id). */
function shopifyEntries(products: Obj[], origin: string, context: FeedContext): FeedEntry[] {
  const entries: FeedEntry[] = [];
  for (const p of products) {
    const images = list(p.images).map((i) => str((i as Obj).src)).filter(Boolean);
    for (const v of list(p.variants) as Obj[]) {
      const out: string[] = [];
      push(out, 'external_item_key', v.id);
      push(out, 'external_product_id', p.id);
      push(out, 'external_variant_id', v.id);
      push(out, 'currency', context.currency);
      push(out, 'sku', v.sku);
      const variantTitle = str(v.title);
      push(out, 'title', variantTitle && variantTitle !== 'Default Title' ? `${str(p.title)} – ${variantTitle}` : p.title);
      push(out, 'description', p.body_html);
      push(out, 'product_type', p.product_type);
      if (str(p.handle)) push(out, 'url', `${origin}/products/${str(p.handle)}?variant=${str(v.id)}`);
      const compare = str(v.compare_at_price);
      push(out, 'price', v.price);
      if (compare) {
        push(out, 'regular_price', compare);
        push(out, 'sale_price', v.price);
      } else {
        push(out, 'regular_price', v.price);
      }
      push(out, 'image', images[0]);
      for (const src of images.slice(1)) push(out, 'gallery', src);
      if (str(p.product_type)) push(out, 'categories', p.product_type);
      if (typeof v.available === 'boolean') push(out, 'available', v.available);
      push(out, 'payload.vendor', p.vendor);
      entries.push({ strings: out, raw: { product_id: p.id, ...v } });
    }
  }
  return entries;
}

function parseJson(body: string, url: URL, maxItems: number, context: FeedContext): FeedResult {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (error) {
    throw new FeedError(`The feed is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
  if (doc && typeof doc === 'object' && !Array.isArray(doc) && Array.isArray((doc as Obj).products)) {
    const entries = shopifyEntries((doc as Obj).products as Obj[], url.origin, context);
    return { format: 'shopify_products', entries: entries.slice(0, maxItems), truncated: entries.length > maxItems };
  }
  const array = Array.isArray(doc) ? doc : doc && typeof doc === 'object' && Array.isArray((doc as Obj).items) ? ((doc as Obj).items as unknown[]) : null;
  if (!array) throw new FeedError('The JSON is neither an array of products, { "items": [...] }, nor Shopify\'s { "products": [...] }.');
  const objects = array.filter((o): o is Obj => typeof o === 'object' && o !== null && !Array.isArray(o));
  const first = objects[0] ?? {};
  const truncated = objects.length > maxItems;
  const kept = objects.slice(0, maxItems);
  if (typeof first.prices === 'object' && first.prices !== null && 'currency_code' in (first.prices as Obj)) {
    return { format: 'woocommerce_store', entries: kept.map((p) => ({ strings: wooStoreEntry(p), raw: p })), truncated };
  }
  if ('permalink' in first && 'stock_status' in first) {
    return { format: 'woocommerce_rest', entries: kept.map((p) => ({ strings: wooRestEntry(p, context), raw: p })), truncated };
  }
  return { format: 'json', entries: kept.map((p) => ({ strings: plainEntry(p), raw: p })), truncated };
}

/** Reads a fetched feed body, recognising the format from the content. */
export function parseFeed(body: string, url: URL, maxItems: number, context: FeedContext = { currency: null }): FeedResult {
  const start = body.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('<')) return parseMerchantXml(start, maxItems);
  if (start.startsWith('[') || start.startsWith('{')) return parseJson(start, url, maxItems, context);
  if (!start) throw new FeedError('The feed is empty.');
  return parseDelimited(start, maxItems);
}

/** WooCommerce's product APIs answer one page at a time. */
function isWooCommerceList(url: URL): boolean {
  return /\/wp-json\/wc\/(store(\/v\d+)?|v\d+)\/products\/?$/.test(url.pathname) && !url.searchParams.has('page');
}

async function fetchOnce(outbound: OutboundClient, url: string, limits: FeedLimits, signal: AbortSignal | undefined, maxBytes: number) {
  let response;
  try {
    response = await outbound.request(url, {
      timeoutMs: limits.timeoutMs,
      maxResponseBytes: maxBytes,
      signal,
      headers: { accept: 'application/xml, application/rss+xml, application/json, text/csv, text/tab-separated-values, text/plain;q=0.8, */*;q=0.5' },
    });
  } catch (error) {
    if (error instanceof OutboundRequestError) {
      throw new FeedError(error.kind === 'too_large' ? `The feed is larger than the ${maxBytes} bytes allowed (CATALOG_FEED_MAX_BYTES).` : `The feed could not be fetched: ${error.message}`);
    }
    throw error;
  }
  if (response.status >= 300 && response.status < 400) throw new FeedError(`The feed answered a redirect (${response.status}); redirects are not followed: use the final URL.`);
  if (response.status !== 200) throw new FeedError(`The feed answered HTTP ${response.status}.`);
  return response;
}

/** Fetches and reads the feed at `sourceUrl` (all pages of a WooCommerce list). */
export async function fetchFeed(outbound: OutboundClient, sourceUrl: string, limits: FeedLimits, context: FeedContext, signal?: AbortSignal): Promise<FeedResult> {
  const url = new URL(sourceUrl);
  if (!isWooCommerceList(url)) {
    const response = await fetchOnce(outbound, sourceUrl, limits, signal, limits.maxBytes);
    return parseFeed(response.body.toString('utf8'), url, limits.maxItems, context);
  }
  const perPage = 100;
  const entries: FeedEntry[] = [];
  let format: FeedResult['format'] | undefined;
  let bytes = 0;
  for (let page = 1; ; page++) {
    const pageUrl = new URL(url);
    pageUrl.searchParams.set('per_page', String(perPage));
    pageUrl.searchParams.set('page', String(page));
    const response = await fetchOnce(outbound, pageUrl.toString(), limits, signal, Math.max(1, limits.maxBytes - bytes));
    bytes += response.body.length;
    const result = parseFeed(response.body.toString('utf8'), url, limits.maxItems - entries.length + 1, context);
    format = result.format;
    entries.push(...result.entries);
    if (entries.length > limits.maxItems) return { format: result.format, entries: entries.slice(0, limits.maxItems), truncated: true };
    const totalPages = Number(response.headers['x-wp-totalpages']);
    if (result.entries.length < perPage || (Number.isInteger(totalPages) && page >= totalPages)) break;
  }
  return { format: format ?? 'woocommerce_store', entries, truncated: false };
}
