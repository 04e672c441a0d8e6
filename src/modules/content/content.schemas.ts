/** Request and response shapes of templates, create-from-template, the editor book and catalog render (spec part 4). */
import { Type } from 'typebox';
import { Nullable } from '../../platform/http/schemas.ts';

const lit = (values: readonly string[], description?: string) => Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {});

/** The two content platforms the spec names `<cms_source>` and `<store_source>`. */
export const CONTENT_SOURCES = ['wordpress', 'woocommerce'] as const;

export const Template = Type.Object(
  {
    id: Type.String({ description: 'A positive integer as a decimal string; the same value is `template_id` (an integer) in request bodies.' }),
    name: Type.String(),
    type: Type.String({ description: '`catalog` (product grids), `products` (a product a page) or `posts` (articles, for posts and pages).' }),
    is_default: Type.Boolean({ description: 'The template used when a request of this type names none.' }),
    thumbnails: Type.Object({
      small: Type.String({ description: 'First content page rendered from sample content, 320 px wide (WebP).' }),
      large: Type.String({ description: 'The same page, 1024 px wide.' }),
    }),
    description: Type.String(),
  },
  { $id: 'Template', title: 'CatalogTemplate' },
);

export const TemplatesQuery = Type.Object({ type: Type.Optional(Type.String({ maxLength: 64, description: 'Only templates of this type (`catalog`, `products`, `posts`; `pages` is an alias of `posts`).' })) });

const uri = (max: number) => Type.String({ format: 'uri', maxLength: max });

export const ContentObject = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 255 }),
  title: Type.String({ minLength: 1, maxLength: 500 }),
  author: Type.Optional(Type.String({ maxLength: 255 })),
  categories: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 20 })),
  content: Type.Optional(Type.String({ maxLength: 50000, description: 'HTML: sanitised (allow-listed text elements, http(s) links and images) and laid out, never executed.' })),
  currency: Type.Optional(Type.String({ maxLength: 10 })),
  date: Type.Optional(Type.String({ maxLength: 100 })),
  description: Type.Optional(Type.String({ maxLength: 50000 })),
  excerpt: Type.Optional(Type.String({ maxLength: 5000 })),
  gallery: Type.Optional(Type.Array(uri(2048), { maxItems: 20 })),
  image: Type.Optional(uri(2048)),
  price: Type.Optional(Type.String({ maxLength: 64 })),
  regular_price: Type.Optional(Type.String({ maxLength: 64 })),
  sale_price: Type.Optional(Type.String({ maxLength: 64 })),
  short_description: Type.Optional(Type.String({ maxLength: 5000 })),
  sku: Type.Optional(Type.String({ maxLength: 255 })),
  stock_status: Type.Optional(Type.String({ maxLength: 100 })),
  type: Type.Optional(Type.String({ maxLength: 50 })),
  url: Type.Optional(uri(2048)),
});

export const CreateFromTemplateBody = Type.Object({
  source: lit(CONTENT_SOURCES, 'The content platform: `wordpress` (the spec\'s <cms_source>) or `woocommerce` (<store_source>).'),
  source_type: lit(['posts', 'pages', 'products']),
  content: Type.Array(ContentObject, { minItems: 1, maxItems: 50 }),
  // One schema with two types, not a union: with type coercion on, a union would turn 0 into null.
  template_id: Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1, description: 'A template id from GET /templates; null or absent: the default for `source_type`.' })),
  metadata: Type.Optional(Type.Object({
    currency: Type.Optional(Type.String({ maxLength: 10 })),
    currency_symbol: Type.Optional(Type.String({ maxLength: 20 })),
    site_name: Type.Optional(Type.String({ maxLength: 255 })),
    site_url: Type.Optional(uri(2048)),
  })),
  title: Type.Optional(Type.String({ maxLength: 255, description: 'Beyond the spec: the book name (default: the site name, or the first title).' })),
  status: Type.Optional(lit(['draft', 'publish'], 'Beyond the spec; default draft.')),
});

export const EditorSettings = Type.Object({
  allow_fullscreen: Type.Optional(Type.Boolean()),
  auto_links_enabled: Type.Optional(Type.Boolean()),
  domains_enabled: Type.Optional(Type.Boolean({ description: 'Read-only on books (derived from the embed-domain list); accepted and ignored.' })),
  eod_enabled: Type.Optional(Type.Boolean({ description: 'Read-only on books (derived from the access list); accepted and ignored.' })),
  flip_sound: Type.Optional(Type.Boolean()),
  open_fullscreen_by_default: Type.Optional(Type.Boolean()),
  share_social_media: Type.Optional(Type.Boolean()),
  animation_type: Type.Optional(Type.String({ maxLength: 255 })),
  background: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  image_display: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  mobile_animation_type: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  pdf_password: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  pdf_privacy_status: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
});

export const PAGE_IMAGE_MAX_CHARS = 22_020_096;

export const Canvas = Type.Object({
  width: Type.Integer({ minimum: 1, maximum: 10000 }),
  height: Type.Integer({ minimum: 1, maximum: 10000 }),
  orientation: lit(['portrait', 'landscape']),
  objects: Type.Array(Type.Array(Type.String()), { minItems: 1, maxItems: 250, description: 'One array per page of serialised editor objects; stored verbatim (up to KONVA_OBJECTS_MAX_BYTES) and returned by GET /books/{book}/konva.' }),
});

export const KonvaBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 255 }),
  canvas: Canvas,
  page_images: Type.Array(Type.String({ maxLength: PAGE_IMAGE_MAX_CHARS }), { minItems: 1, maxItems: 250, description: 'Rendered pages as `data:image/png|jpeg|webp;base64,…` URLs, in page order.' }),
  status: Type.Optional(lit(['draft', 'publish'])),
  thumbnail: Type.Optional(Nullable(Type.String({ maxLength: PAGE_IMAGE_MAX_CHARS }))),
  settings: Type.Optional(EditorSettings),
});

export const RenderCatalogBody = Type.Object({
  items: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 250, description: 'External item keys, in page order. Absent: every available item of the catalog, up to 250.' })),
  title: Type.Optional(Type.String({ maxLength: 255 })),
  status: Type.Optional(lit(['draft', 'publish'])),
  template_id: Type.Optional(Type.Integer({ minimum: 1 })),
  cover: Type.Optional(Type.Object({
    title: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    website: Type.Optional(Type.String({ maxLength: 2048 })),
  })),
  settings: Type.Optional(EditorSettings),
});

export const CatalogParams = Type.Object({ catalog: Type.Integer({ minimum: 1 }) });
