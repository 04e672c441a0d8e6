/** The Brand record (spec part 2) and the fields of POST/PUT /brand (spec part 4), with their checks. */
import { Type, type Static } from 'typebox';
import { DateTime, Nullable } from '../../platform/http/schemas.ts';

/** "declared max 2048": kilobytes, as the reference's validation rule reads (2 MiB). */
export const LOGO_MAX_BYTES = 2048 * 1024;

// Each optional field may also be sent empty, which clears it: `^$|` in the patterns says so (one schema, one clear message).
const HttpUrl = (description: string) =>
  Type.String({ maxLength: 2048, pattern: '^$|^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/$.?#][^\\s]*$', description: `${description} An http(s) URL; an empty value clears it.` });
const Color = (description: string) =>
  Type.String({ pattern: '^$|^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$', description: `${description} \`#rgb\` or \`#rrggbb\`; an empty value clears it.` });

/** Text fields of POST and PUT /brand (multipart). Omitted fields are left as they are; an empty value clears one. */
export const BrandFields = Type.Object({
  company_name: Type.String({ minLength: 1, maxLength: 255 }),
  about_brand: Type.Optional(Type.String({ maxLength: 5000 })),
  contact_number: Type.Optional(Type.String({ maxLength: 50, pattern: '^$|^\\+?[0-9][0-9 ().\\-/]{2,49}$', description: 'Digits, spaces, + ( ) . - /.' })),
  website_url: Type.Optional(HttpUrl('Where the logo links to in the reader.')),
  google_analytics: Type.Optional(Type.String({
    pattern: '^$|^([Gg]-[A-Za-z0-9]{4,20}|[Uu][Aa]-[0-9]{4,12}-[0-9]{1,4})$',
    description: 'A Google Analytics measurement id (`G-XXXXXXX`, or a legacy `UA-…-…` property); loaded by the reader only while take-over is on.',
  })),
  primary_color: Type.Optional(Color('The reader\'s bars.')),
  secondary_color: Type.Optional(Color('Accent: the reader\'s buttons and highlights.')),
  tertiary_color: Type.Optional(Color('Behind the pages.')),
  twitter: Type.Optional(HttpUrl('Profile link shown beside the share button.')),
  linkedin: Type.Optional(HttpUrl('Profile link.')),
  facebook: Type.Optional(HttpUrl('Profile link.')),
  youtube: Type.Optional(HttpUrl('Channel link.')),
  instagram: Type.Optional(HttpUrl('Profile link.')),
  pinterest: Type.Optional(HttpUrl('Profile link.')),
});
export type BrandFieldsInput = Static<typeof BrandFields>;

export const UpdateBrandFields = Type.Object({
  id: Type.Integer({ minimum: 1, description: "The brand's id (GET /brand)." }),
  ...BrandFields.properties,
  logo: Type.Optional(Type.Literal('', { description: 'Send empty to remove the logo (a new `file` replaces it).' })),
});

const LogoPart = Type.String({ format: 'binary', description: 'The logo: a JPEG, PNG, WebP or GIF image of at most 2048 KB, recognised by its content. Stored as WebP (at most 1024×512) at an immutable URL.' });
export const CreateBrandBody = Type.Object({ ...BrandFields.properties, file: Type.Optional(LogoPart) });
export const UpdateBrandBody = Type.Object({ ...UpdateBrandFields.properties, file: Type.Optional(LogoPart) });

export const Brand = Type.Object(
  {
    id: Type.Integer(),
    workspace_id: Type.Integer(),
    company_name: Nullable(Type.String()),
    logo: Nullable(Type.String({ description: 'URL of the stored logo (WebP, immutable).' })),
    contact_number: Nullable(Type.String()),
    website_url: Nullable(Type.String()),
    google_analytics: Nullable(Type.String()),
    about_brand: Nullable(Type.String()),
    take_over_branding: Type.Boolean({ description: 'While true (and on the Company plan) every public flipbook of the workspace shows this brand instead of the service\'s.' }),
    created_at: Nullable(DateTime),
    updated_at: Nullable(DateTime),
    brand_color: Type.Optional(Type.Object({
      id: Type.Integer(), brand_id: Type.Integer(),
      primary_color: Nullable(Type.String()), secondary_color: Nullable(Type.String()), tertiary_color: Nullable(Type.String()),
      created_at: Nullable(DateTime), updated_at: Nullable(DateTime),
    })),
    brand_social_media: Type.Optional(Type.Object({
      id: Type.Integer(), brand_id: Type.Integer(),
      twitter: Nullable(Type.String()), linkedin: Nullable(Type.String()), facebook: Nullable(Type.String()),
      youtube: Nullable(Type.String()), instagram: Nullable(Type.String()), pinterest: Nullable(Type.String()),
      created_at: Nullable(DateTime), updated_at: Nullable(DateTime),
    })),
    workspace: Type.Optional(Type.Object({ can_rename: Type.Boolean(), id: Type.Integer(), name: Type.String(), slug: Type.String() })),
  },
  { $id: 'Brand', title: 'Brand' },
);
