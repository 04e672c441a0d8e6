/**
 * The workspace brand: one per workspace, with its colors and social links
 * (one row each), and a logo stored like page images (processed to WebP
 * under a content-hashed key, so its URL never changes meaning).
 */
import { createHash, randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import sharp from 'sharp';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { ERRORS, type AppError } from '../../platform/errors.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import type { BrandFieldsInput } from './brand.schemas.ts';
import { brandColors, brands, brandSocialMedia, type BrandColorRow, type BrandRow, type BrandSocialRow } from './brand.tables.ts';

export interface BrandCaller {
  workspaceId: number;
}

export interface LogoUpload {
  bytes: Buffer;
}

/** Formats a logo may arrive in, read from its content by sharp (never from its name or declared type). */
const LOGO_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif']);
/** The stored logo fits in this box: sharp on a 2× screen for a 48 px toolbar, with room for wide wordmarks. */
const LOGO_BOX = { width: 1024, height: 512 };
/** Refuses decompression bombs before decoding (a 2 MB PNG can claim gigapixels). */
const MAX_INPUT_PIXELS = 40_000_000;

const SOCIAL_FIELDS = ['twitter', 'linkedin', 'facebook', 'youtube', 'instagram', 'pinterest'] as const;

export function logoKey(workspaceId: number, hash: string): string {
  return `brands/${workspaceId}/logo-${hash}.webp`;
}

/** Omitted → unchanged (undefined); empty → cleared (null). Colors are stored lower-case, ids upper-case. */
function value(input: string | undefined, normalise: (v: string) => string = (v) => v.trim()): string | null | undefined {
  if (input === undefined) return undefined;
  const trimmed = input.trim();
  return trimmed === '' ? null : normalise(trimmed);
}

function defined<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Checks the image by its content, then stores it resized as WebP. */
export async function processLogo(bytes: Buffer): Promise<{ body: Buffer; width: number; height: number; hash: string }> {
  let format: string | undefined;
  try {
    format = (await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata()).format;
  } catch {
    format = undefined;
  }
  if (!format || !LOGO_FORMATS.has(format)) {
    throw ERRORS.validation({ file: ['The logo must be an image: JPEG, PNG, WebP or GIF (recognised by its content).'] });
  }
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, animated: false })
      .rotate()
      .resize({ ...LOGO_BOX, fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 90, alphaQuality: 100, effort: 4 })
      .toBuffer({ resolveWithObject: true });
    return { body: data, width: info.width, height: info.height, hash: createHash('sha256').update(data).digest('hex').slice(0, 32) };
  } catch {
    throw ERRORS.validation({ file: ['The logo image could not be read: it may be damaged or too large in pixels (at most 40 megapixels).'] });
  }
}

export type BrandRecord = ReturnType<typeof toBrandRecord>;

function toBrandRecord(
  row: BrandRow,
  colors: BrandColorRow,
  social: BrandSocialRow,
  workspace: { id: number; name: string; slug: string; canRename: boolean },
  assetUrl: (key: string) => string,
) {
  const iso = (d: Date) => d.toISOString();
  return {
    id: row.id,
    workspace_id: row.workspaceId,
    company_name: row.companyName,
    logo: row.logoKey ? assetUrl(row.logoKey) : null,
    contact_number: row.contactNumber,
    website_url: row.websiteUrl,
    google_analytics: row.googleAnalytics,
    about_brand: row.aboutBrand,
    take_over_branding: row.takeOverBranding,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    brand_color: {
      id: colors.id, brand_id: colors.brandId,
      primary_color: colors.primaryColor, secondary_color: colors.secondaryColor, tertiary_color: colors.tertiaryColor,
      created_at: iso(colors.createdAt), updated_at: iso(colors.updatedAt),
    },
    brand_social_media: {
      id: social.id, brand_id: social.brandId,
      twitter: social.twitter, linkedin: social.linkedin, facebook: social.facebook,
      youtube: social.youtube, instagram: social.instagram, pinterest: social.pinterest,
      created_at: iso(social.createdAt), updated_at: iso(social.updatedAt),
    },
    workspace: { can_rename: workspace.canRename, id: workspace.id, name: workspace.name, slug: workspace.slug },
  };
}

/** The brand's own columns from the form fields. */
function brandColumns(fields: Partial<BrandFieldsInput>) {
  return defined({
    companyName: value(fields.company_name) ?? undefined,
    aboutBrand: value(fields.about_brand),
    contactNumber: value(fields.contact_number),
    websiteUrl: value(fields.website_url),
    googleAnalytics: value(fields.google_analytics, (v) => v.toUpperCase()),
  });
}

function colorColumns(fields: Partial<BrandFieldsInput>) {
  const lower = (v: string) => v.toLowerCase();
  return defined({
    primaryColor: value(fields.primary_color, lower),
    secondaryColor: value(fields.secondary_color, lower),
    tertiaryColor: value(fields.tertiary_color, lower),
  });
}

function socialColumns(fields: Partial<BrandFieldsInput>) {
  return defined(Object.fromEntries(SOCIAL_FIELDS.map((f) => [f, value(fields[f])])) as Record<(typeof SOCIAL_FIELDS)[number], string | null | undefined>);
}

export class BrandService {
  private readonly db: Db;
  private readonly storage: Storage;
  readonly assetUrl: (key: string) => string;

  constructor(deps: { db: Db; storage: Storage; publicBaseUrl: string }) {
    this.db = deps.db;
    this.storage = deps.storage;
    this.assetUrl = (key) => deps.storage.directUrl(key) ?? `${deps.publicBaseUrl}/assets/${key}`;
  }

  private async load(db: DbOrTx, workspaceId: number): Promise<BrandRecord | null> {
    const [found] = await db
      .select({ brand: brands, colors: brandColors, social: brandSocialMedia, workspace: workspaces })
      .from(brands)
      .innerJoin(brandColors, eq(brandColors.brandId, brands.id))
      .innerJoin(brandSocialMedia, eq(brandSocialMedia.brandId, brands.id))
      .innerJoin(workspaces, eq(workspaces.id, brands.workspaceId))
      .where(eq(brands.workspaceId, workspaceId));
    return found ? toBrandRecord(found.brand, found.colors, found.social, found.workspace, this.assetUrl) : null;
  }

  async get(caller: BrandCaller): Promise<BrandRecord | null> {
    return this.load(this.db, caller.workspaceId);
  }

  /**
   * Stores the logo under a key of its own: the content hash plus random bits, so no two writes (even of
   * the same bytes) share a file, and deleting the file a write replaced can never remove another's.
   */
  private async storeLogo(workspaceId: number, logo: LogoUpload) {
    const processed = await processLogo(logo.bytes);
    const key = logoKey(workspaceId, processed.hash.slice(0, 16) + randomBytes(8).toString('hex'));
    await this.storage.put(key, processed.body, { contentType: 'image/webp' });
    return { logoKey: key, logoWidth: processed.width, logoHeight: processed.height };
  }

  /** One brand per workspace: a second POST answers 409 and points to PUT. */
  async create(caller: BrandCaller, fields: BrandFieldsInput, logo: LogoUpload | null): Promise<BrandRecord> {
    const existing = await this.get(caller);
    if (existing) throw conflictExisting(existing.id);
    const stored: { logoKey?: string } = logo ? await this.storeLogo(caller.workspaceId, logo) : {};
    try {
      return await this.db.transaction(async (tx) => {
        const [row] = await tx
          .insert(brands)
          .values({ workspaceId: caller.workspaceId, companyName: fields.company_name.trim(), ...brandColumns(fields), ...stored })
          .onConflictDoNothing()
          .returning();
        // Two first POSTs at once: the unique index lets one in.
        if (!row) throw conflictExisting((await this.get(caller))?.id);
        await tx.insert(brandColors).values({ brandId: row.id, ...colorColumns(fields) });
        await tx.insert(brandSocialMedia).values({ brandId: row.id, ...socialColumns(fields) });
        return (await this.load(tx, caller.workspaceId))!;
      });
    } catch (error) {
      if (stored.logoKey) await this.storage.delete(stored.logoKey).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Changes the fields sent (an empty value clears one); `file` replaces the logo, `logo: ''` removes it.
   * Replacement is atomic: the new file is written first, the row is switched under a row lock (so two
   * updates at once apply one after the other, each replacing what the other left), and the file the
   * row pointed to is deleted only after the commit. A failed write deletes the new file instead.
   */
  async update(caller: BrandCaller, input: Partial<BrandFieldsInput> & { id: number; removeLogo?: boolean }, logo: LogoUpload | null): Promise<BrandRecord> {
    const [found] = await this.db.select({ id: brands.id }).from(brands).where(eq(brands.workspaceId, caller.workspaceId));
    // Another workspace's brand id answers exactly like a missing brand.
    if (!found || found.id !== input.id) throw ERRORS.notFound('Brand');
    const stored: { logoKey?: string | null; logoWidth?: number | null; logoHeight?: number | null } =
      logo ? await this.storeLogo(caller.workspaceId, logo) : input.removeLogo ? { logoKey: null, logoWidth: null, logoHeight: null } : {};
    const now = new Date();
    let replacedKey: string | null = null;
    let record: BrandRecord;
    try {
      record = await this.db.transaction(async (tx) => {
        const [current] = await tx.select({ logoKey: brands.logoKey }).from(brands).where(eq(brands.id, found.id)).for('update');
        if (stored.logoKey !== undefined) replacedKey = current?.logoKey ?? null;
        await tx.update(brands).set({ ...brandColumns(input), ...stored, updatedAt: now }).where(eq(brands.id, found.id));
        const colors = colorColumns(input);
        if (Object.keys(colors).length > 0) await tx.update(brandColors).set({ ...colors, updatedAt: now }).where(eq(brandColors.brandId, found.id));
        const social = socialColumns(input);
        if (Object.keys(social).length > 0) await tx.update(brandSocialMedia).set({ ...social, updatedAt: now }).where(eq(brandSocialMedia.brandId, found.id));
        return (await this.load(tx, caller.workspaceId))!;
      });
    } catch (error) {
      if (stored.logoKey) await this.storage.delete(stored.logoKey).catch(() => undefined);
      throw error;
    }
    // Committed: the replaced file is unused (its key was this row's alone) and can go.
    if (replacedKey && replacedKey !== stored.logoKey) await this.storage.delete(replacedKey).catch(() => undefined);
    return record;
  }

  /** Flips take_over_branding in one statement (two toggles at once flip twice) and returns the brand. */
  async toggleTakeOver(caller: BrandCaller): Promise<BrandRecord> {
    const [row] = await this.db
      .update(brands)
      .set({ takeOverBranding: sql`not ${brands.takeOverBranding}`, updatedAt: new Date() })
      .where(eq(brands.workspaceId, caller.workspaceId))
      .returning({ id: brands.id });
    if (!row) throw ERRORS.notFound('Brand');
    return (await this.get(caller))!;
  }
}

function conflictExisting(id: number | undefined): AppError {
  return ERRORS.conflict('This workspace already has a brand (one per workspace): change it with PUT /brand.', id ? { brand_id: [String(id)] } : undefined);
}

/** What the public reader shows while take-over is on. */
export interface ReaderBrand {
  companyName: string;
  logo: { url: string; width: number; height: number } | null;
  websiteUrl: string | null;
  googleAnalytics: string | null;
  colors: { primary: string | null; secondary: string | null; tertiary: string | null };
  social: { network: (typeof SOCIAL_FIELDS)[number]; url: string }[];
}

/**
 * The workspace's brand for its public flipbooks, or null while take-over is off (read per request: a toggle shows at once).
 * `evenWithoutTakeOver`: the brand as saved whatever the toggle (the application's preview of it).
 */
export async function loadReaderBrand(db: DbOrTx, workspaceId: number, assetUrl: (key: string) => string, options: { evenWithoutTakeOver?: boolean } = {}): Promise<ReaderBrand | null> {
  const [found] = await db
    .select({ brand: brands, colors: brandColors, social: brandSocialMedia })
    .from(brands)
    .innerJoin(brandColors, eq(brandColors.brandId, brands.id))
    .innerJoin(brandSocialMedia, eq(brandSocialMedia.brandId, brands.id))
    .where(eq(brands.workspaceId, workspaceId));
  if (!found || (!found.brand.takeOverBranding && !options.evenWithoutTakeOver)) return null;
  const { brand, colors, social } = found;
  return {
    companyName: brand.companyName,
    logo: brand.logoKey ? { url: assetUrl(brand.logoKey), width: brand.logoWidth ?? 0, height: brand.logoHeight ?? 0 } : null,
    websiteUrl: brand.websiteUrl,
    googleAnalytics: brand.googleAnalytics,
    colors: { primary: colors.primaryColor, secondary: colors.secondaryColor, tertiary: colors.tertiaryColor },
    social: SOCIAL_FIELDS.map((network) => ({ network, url: social[network] })).filter((s): s is { network: (typeof SOCIAL_FIELDS)[number]; url: string } => Boolean(s.url)),
  };
}

export { SOCIAL_FIELDS };
