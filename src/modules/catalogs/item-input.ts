/**
 * The inner layout of item bodies (spec: "array of arrays of strings"): each
 * item is a list of `field=value` strings, split at the first "=".
 *
 *   ["external_item_key=tee-blue-m", "title=Blue tee, M", "price=19.90", "currency=EUR",
 *    "gallery=https://shop.example/tee-2.jpg", "categories=Men > T-shirts", "payload.color=blue"]
 *
 * Chosen over positional arrays because every element names its field:
 * nothing shifts when a field is left out, order does not matter, and a
 * wrong name is reported by name. Repeating a list field (`gallery`,
 * `categories`, `availability`) adds an entry; `payload.<name>` adds an
 * attribute. Feeds are turned into the same strings, so one parser checks
 * everything that becomes an item.
 */
import { createHash } from 'node:crypto';
import type { CatalogItemAttribute, CatalogItemLocationStock, CatalogSyncError } from './catalogs.tables.ts';
import { CATALOG_ITEM_STATUSES, STOCK_STATUSES } from './catalogs.records.ts';

export const MAX_FIELDS_PER_ITEM = 300;
const MAX_KEY = 255;
const MAX_SHORT = 2048;
const MAX_LONG = 65_536;
const MAX_LIST = 100;

const SHORT_FIELDS = ['external_product_id', 'external_variant_id', 'sku', 'title', 'product_type'] as const;
const URL_FIELDS = ['image', 'url'] as const;
const LONG_FIELDS = ['description', 'short_description'] as const;
const PRICE_FIELDS = ['price', 'regular_price', 'sale_price'] as const;
const AVAILABILITY_FIELDS = ['available', 'stock_quantity', 'stock_status', 'availability'] as const;

/** Every field name an item may carry (besides `payload.<name>`). */
export const ITEM_FIELDS = [
  'external_item_key', ...SHORT_FIELDS, 'status', ...PRICE_FIELDS, 'currency', ...URL_FIELDS, ...LONG_FIELDS,
  'gallery', 'categories', ...AVAILABILITY_FIELDS, 'snapshot_at',
] as const;

/** What an item's availability fields say; only the fields given are present. */
export interface AvailabilityChange {
  available?: boolean;
  stock_quantity?: number | null;
  stock_status?: string | null;
  availability?: CatalogItemLocationStock[];
}

/** An item's content as stored by an upsert (fields left out are null). */
export interface ItemContent {
  external_product_id: string;
  external_variant_id: string | null;
  sku: string | null;
  title: string | null;
  status: string;
  product_type: string | null;
  price: string | null;
  regular_price: string | null;
  sale_price: string | null;
  currency: string | null;
  image: string | null;
  url: string | null;
  description: string | null;
  short_description: string | null;
  gallery: string[] | null;
  categories: string[] | null;
  payload: CatalogItemAttribute[] | null;
}

export interface ParsedItem {
  key: string;
  /** Per-item snapshot_at, when the item carries one. */
  snapshotAt: Date | null;
  content: ItemContent | null;
  availability: AvailabilityChange | null;
}

export type ParseMode = 'upsert' | 'availability';

class FieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

const DECIMAL = /^(\d{1,13})(?:\.(\d{1,6}))?$/;
const CURRENCY = /^[A-Z]{3}$/;

/**
 * "19.90", "19.9 EUR", "1,299.00"? No: a decimal with a dot, at most 6
 * decimals, optionally followed by an ISO currency (Merchant Center writes
 * prices so). Kept as a string; leading zeros of the integer part dropped.
 */
export function parsePrice(field: string, raw: string): { amount: string; currency: string | null } {
  const match = /^\s*(\S+)(?:\s+([A-Za-z]{3}))?\s*$/.exec(raw);
  const number = match ? DECIMAL.exec(match[1]!) : null;
  if (!match || !number) throw new FieldError(field, `"${raw.slice(0, 40)}" is not a price: write a decimal with a dot ("19.90"), optionally followed by a currency ("19.90 EUR").`);
  const integer = number[1]!.replace(/^0+(?=\d)/, '');
  return { amount: number[2] === undefined ? integer : `${integer}.${number[2]}`, currency: match[2]?.toUpperCase() ?? null };
}

function parseBoolean(field: string, raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new FieldError(field, 'Write true or false.');
}

function parseQuantity(field: string, raw: string): number {
  const value = raw.trim();
  if (!/^-?\d{1,9}$/.test(value)) throw new FieldError(field, 'Write a whole number (negative for oversold stock).');
  return Number(value);
}

function parseUrl(field: string, raw: string): string {
  const value = raw.trim();
  if (value.length > MAX_SHORT) throw new FieldError(field, `At most ${MAX_SHORT} characters.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new FieldError(field, 'Write an absolute http(s) URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new FieldError(field, 'Write an absolute http(s) URL.');
  return value;
}

function text(field: string, raw: string, max: number): string {
  if (raw.length > max) throw new FieldError(field, `At most ${max} characters.`);
  return raw;
}

/** in_stock, "in stock", instock, outofstock, onbackorder… → the four stock statuses. */
export function normaliseStockStatus(raw: string): string | null {
  const value = raw.trim().toLowerCase().replace(/[\s-]+/g, '_');
  const aliases: Record<string, string> = {
    in_stock: 'in_stock', instock: 'in_stock', out_of_stock: 'out_of_stock', outofstock: 'out_of_stock',
    preorder: 'preorder', pre_order: 'preorder', backorder: 'backorder', onbackorder: 'backorder', on_backorder: 'backorder',
  };
  return aliases[value] ?? null;
}

/** "Berlin store:12" → { location, quantity, available } (the last ":" separates the quantity). */
function parseLocation(raw: string): CatalogItemLocationStock {
  const at = raw.lastIndexOf(':');
  const location = at > 0 ? raw.slice(0, at).trim() : '';
  if (!location || location.length > MAX_KEY) throw new FieldError('availability', 'Write "<location>:<quantity>", for example "Berlin store:12".');
  const quantity = parseQuantity('availability', raw.slice(at + 1));
  return { location, quantity, available: quantity > 0 };
}

/** Fills what the given availability fields imply: quantity from locations, `available` from quantity or status. */
function completeAvailability(change: AvailabilityChange): AvailabilityChange {
  const result = { ...change };
  if (result.stock_quantity === undefined && result.availability) {
    result.stock_quantity = result.availability.reduce((sum, l) => sum + l.quantity, 0);
  }
  if (result.available === undefined) {
    if (result.stock_status) result.available = result.stock_status !== 'out_of_stock';
    else if (typeof result.stock_quantity === 'number') result.available = result.stock_quantity > 0;
  }
  if (result.stock_status === undefined && result.available !== undefined) result.stock_status = result.available ? 'in_stock' : 'out_of_stock';
  return result;
}

/**
 * Parses one item. Throws FieldError (field + message) at the first problem.
 * In `availability` mode only the key, the availability fields and
 * snapshot_at are accepted.
 */
function parseOne(strings: string[], mode: ParseMode): ParsedItem {
  if (strings.length > MAX_FIELDS_PER_ITEM) throw new FieldError('item', `At most ${MAX_FIELDS_PER_ITEM} fields per item.`);
  const single = new Map<string, string>();
  const lists: Record<'gallery' | 'categories' | 'availability', string[]> = { gallery: [], categories: [], availability: [] };
  const payload: CatalogItemAttribute[] = [];
  for (const entry of strings) {
    const eq = entry.indexOf('=');
    if (eq < 1) throw new FieldError('item', `"${entry.slice(0, 40)}" is not "field=value".`);
    const field = entry.slice(0, eq).trim();
    const value = entry.slice(eq + 1);
    if (field.startsWith('payload.')) {
      if (mode === 'availability') throw new FieldError(field, 'An availability update carries only external_item_key, available, stock_quantity, stock_status, availability and snapshot_at.');
      const name = field.slice('payload.'.length);
      if (!name || name.length > MAX_KEY) throw new FieldError(field, 'Write payload.<name>=<value> with a name of 1-255 characters.');
      payload.push({ name, value: text(field, value, MAX_SHORT) });
      continue;
    }
    if (!(ITEM_FIELDS as readonly string[]).includes(field)) throw new FieldError(field, `Unknown field. Fields: ${ITEM_FIELDS.join(', ')}, payload.<name>.`);
    if (mode === 'availability' && !['external_item_key', 'snapshot_at', ...AVAILABILITY_FIELDS].includes(field)) {
      throw new FieldError(field, 'An availability update carries only external_item_key, available, stock_quantity, stock_status, availability and snapshot_at.');
    }
    if (field === 'gallery' || field === 'categories' || field === 'availability') {
      if (lists[field].length >= MAX_LIST) throw new FieldError(field, `At most ${MAX_LIST} entries.`);
      lists[field].push(value);
      continue;
    }
    if (single.has(field)) throw new FieldError(field, 'Given twice; only gallery, categories and availability repeat.');
    single.set(field, value);
  }

  const key = (single.get('external_item_key') ?? '').trim();
  if (!key) throw new FieldError('external_item_key', 'Every item needs external_item_key=<key>.');
  if (key.length > MAX_KEY) throw new FieldError('external_item_key', `At most ${MAX_KEY} characters.`);

  let snapshotAt: Date | null = null;
  const snapshot = single.get('snapshot_at');
  if (snapshot !== undefined) {
    snapshotAt = new Date(snapshot.trim());
    if (!/^\d{4}-\d{2}-\d{2}T/.test(snapshot.trim()) || Number.isNaN(snapshotAt.getTime())) throw new FieldError('snapshot_at', 'Write an ISO 8601 date-time ("2026-11-22T10:00:00Z").');
  }

  const availability: AvailabilityChange = {};
  if (single.has('available')) availability.available = parseBoolean('available', single.get('available')!);
  if (single.has('stock_quantity')) availability.stock_quantity = single.get('stock_quantity')!.trim() === '' ? null : parseQuantity('stock_quantity', single.get('stock_quantity')!);
  if (single.has('stock_status')) {
    const raw = single.get('stock_status')!;
    const status = raw.trim() === '' ? null : normaliseStockStatus(raw);
    if (status === null && raw.trim() !== '') throw new FieldError('stock_status', `Write one of ${STOCK_STATUSES.join(', ')}.`);
    availability.stock_status = status;
  }
  if (lists.availability.length > 0) availability.availability = lists.availability.map(parseLocation);
  const hasAvailability = Object.keys(availability).length > 0;
  if (mode === 'availability' && !hasAvailability) throw new FieldError('item', 'Give at least one of available, stock_quantity, stock_status, availability.');

  if (mode === 'availability') return { key, snapshotAt, content: null, availability: completeAvailability(availability) };

  const opt = (field: string, max: number): string | null => {
    const value = single.get(field);
    return value === undefined || value.trim() === '' ? null : text(field, value.trim(), max);
  };
  const prices: Partial<Record<(typeof PRICE_FIELDS)[number], string | null>> = {};
  let currency = opt('currency', 3)?.toUpperCase() ?? null;
  if (currency !== null && !CURRENCY.test(currency)) throw new FieldError('currency', 'Write an ISO 4217 code ("EUR").');
  for (const field of PRICE_FIELDS) {
    const raw = opt(field, 64);
    if (raw === null) {
      prices[field] = null;
      continue;
    }
    const parsed = parsePrice(field, raw);
    if (parsed.currency) {
      if (currency && currency !== parsed.currency) throw new FieldError(field, `The price's currency ${parsed.currency} differs from currency ${currency}.`);
      currency = parsed.currency;
    }
    prices[field] = parsed.amount;
  }
  if (currency === null && (prices.price || prices.regular_price || prices.sale_price)) {
    throw new FieldError('currency', 'A price needs its currency: currency=EUR, or "19.90 EUR" in the price.');
  }
  const status = (opt('status', 32) ?? 'active').toLowerCase();
  if (!(CATALOG_ITEM_STATUSES as readonly string[]).includes(status)) throw new FieldError('status', `Write one of ${CATALOG_ITEM_STATUSES.join(', ')}.`);
  const image = opt('image', MAX_SHORT);
  const url = opt('url', MAX_SHORT);
  const content: ItemContent = {
    external_product_id: opt('external_product_id', MAX_KEY) ?? key,
    external_variant_id: opt('external_variant_id', MAX_KEY),
    sku: opt('sku', MAX_KEY),
    title: opt('title', MAX_SHORT),
    status,
    product_type: opt('product_type', MAX_SHORT),
    price: prices.price ?? null,
    regular_price: prices.regular_price ?? null,
    sale_price: prices.sale_price ?? null,
    currency,
    image: image === null ? null : parseUrl('image', image),
    url: url === null ? null : parseUrl('url', url),
    description: opt('description', MAX_LONG),
    short_description: opt('short_description', MAX_LONG),
    gallery: lists.gallery.length ? lists.gallery.map((g) => parseUrl('gallery', g)) : null,
    categories: lists.categories.length ? lists.categories.map((c) => text('categories', c.trim(), MAX_SHORT)).filter(Boolean) : null,
    payload: payload.length ? payload : null,
  };
  return { key, snapshotAt, content, availability: hasAvailability ? completeAvailability(availability) : null };
}

export interface ParseResult {
  items: { index: number; item: ParsedItem; raw: unknown }[];
  errors: CatalogSyncError[];
}

/** Guesses the key of an item that failed to parse, so its error (and the stored item) can name it. */
function keyOf(strings: string[]): string | null {
  const entry = strings.find((s) => s.startsWith('external_item_key='));
  const key = entry?.slice('external_item_key='.length).trim();
  return key && key.length <= MAX_KEY ? key : null;
}

/**
 * Parses a request's (or feed's) items. One bad item never fails the others:
 * it is reported in `errors` with its index. A key given twice keeps its
 * first item; the later ones are refused.
 */
export function parseItems(entries: { strings: string[]; raw?: unknown }[], mode: ParseMode, offset = 0): ParseResult {
  const result: ParseResult = { items: [], errors: [] };
  const seen = new Set<string>();
  entries.forEach(({ strings, raw }, i) => {
    const index = offset + i;
    try {
      const item = parseOne(strings, mode);
      if (seen.has(item.key)) throw new FieldError('external_item_key', 'This key is already given by an earlier item of this request; send each item once.');
      seen.add(item.key);
      result.items.push({ index, item, raw: raw ?? strings });
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      result.errors.push({ index, external_item_key: keyOf(strings), field: error.field, message: error.message });
    }
  });
  return result;
}

/** SHA-256 of the content fields: equal content, equal hash. */
export function contentHash(content: ItemContent): string {
  return createHash('sha256').update(JSON.stringify(content)).digest('hex');
}
