/** The workspace brand: spec part 4, "Brand". */
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ERRORS } from '../../platform/errors.ts';
import { validationDetails } from '../../platform/http/error-handler.ts';
import { readMultipartForm } from '../../platform/http/multipart.ts';
import { authOf } from '../../platform/http/route-config.ts';
import { BrandFields, Brand, CreateBrandBody, LOGO_MAX_BYTES, UpdateBrandBody, UpdateBrandFields, type BrandFieldsInput } from './brand.schemas.ts';
import type { BrandService, LogoUpload } from './brand.service.ts';
import { errorResponses } from '../../platform/http/openapi.ts';

const BrandRef = Type.Ref('Brand');
const TOO_LARGE = 'The logo may not be greater than 2048 kilobytes.';

/** The form's text fields and its one file (`file`), read with the logo capped at 2048 KB. */
async function readForm(request: FastifyRequest): Promise<{ fields: Record<string, string>; logo: LogoUpload | null }> {
  const form = await readMultipartForm(request, {
    fileFields: ['file'],
    maxFileBytes: LOGO_MAX_BYTES,
    expected: 'send the brand as multipart/form-data (the logo in the file field).',
    receive: async (part) => ({ bytes: await part.toBuffer() }),
    fileTooLarge: () => ERRORS.validation({ file: [TOO_LARGE] }),
  });
  if (form.file && form.file.value.bytes.length === 0) throw ERRORS.validation({ file: ['The logo file is empty.'] });
  return { fields: form.fields, logo: form.file?.value ?? null };
}

/** Multipart fields are strings; they are checked against the same schema the document shows. Unknown fields are refused. */
function checkFields<T extends TSchema>(schema: T, fields: Record<string, string>): Record<string, unknown> {
  const known = new Set(Object.keys((schema as unknown as { properties: object }).properties));
  const unknown = Object.keys(fields).filter((f) => !known.has(f));
  if (unknown.length > 0) throw ERRORS.validation(Object.fromEntries(unknown.map((f) => [f, [`Unknown field "${f}".`]])));
  const converted = Value.Convert(schema, fields) as Record<string, unknown>;
  if (!Value.Check(schema, converted)) {
    // TypeBox reports missing fields together (requiredProperties); the error details want one per field.
    const errors = [...Value.Errors(schema, converted)].flatMap((e): { instancePath: string; keyword: string; message: string; params: Record<string, unknown> }[] => {
      const params = e.params as Record<string, unknown>;
      const missing = e.keyword === 'required' && Array.isArray(params.requiredProperties) ? (params.requiredProperties as string[]) : null;
      return missing
        ? missing.map((name) => ({ instancePath: e.instancePath, keyword: 'required', message: e.message, params: { missingProperty: name } }))
        : [{ instancePath: e.instancePath, keyword: e.keyword, message: e.message, params }];
    });
    throw ERRORS.validation(validationDetails(errors));
  }
  return converted;
}

export const brandRoutes: FastifyPluginAsyncTypebox<{ brand: BrandService }> = async (app, { brand }) => {
  app.addSchema(Brand);
  // A logo over the limit is cut off by the parser and answered 422 (the spec's validation rule), not 413.
  await app.register(multipart, { limits: { fileSize: LOGO_MAX_BYTES, files: 1, fields: 20, fieldSize: 8192, parts: 22 } });

  app.get('/brand', {
    schema: {
      operationId: 'getBrand', tags: ['Brand'], summary: "The workspace's brand",
      description: '`brand` is null until one is created. Readable on every plan (a workspace that moved down a plan still sees its brand).',
      response: { 200: Type.Object({ data: Type.Object({ brand: Type.Union([BrandRef, Type.Null()]) }), meta: Type.Object({}) }) },
    },
    config: { scope: 'brand:read' },
  }, async (request) => ({ data: { brand: await brand.get(authOf(request)) }, meta: {} }));

  app.post('/brand', {
    schema: {
      operationId: 'createBrand', tags: ['Brand'], summary: "Create the workspace's brand",
      description:
        'multipart/form-data. One brand per workspace: when it already has one, the answer is 409 (`details.brand_id`); change it with PUT /brand. ' +
        '`file` is the logo, checked by its content (JPEG, PNG, WebP or GIF; at most 2048 KB, else 422), stored as WebP at an immutable URL. ' +
        'Needs the Pro or Company plan (403 PlanRestrictionException otherwise).',
      response: { 201: Type.Object({ data: Type.Object({ brand: BrandRef }) }) },
    },
    config: { scope: 'brand:write', feature: 'brand', multipartBody: CreateBrandBody },
  }, async (request, reply) => {
    const { fields, logo } = await readForm(request);
    const input = checkFields(BrandFields, fields) as BrandFieldsInput;
    const created = await brand.create(authOf(request), input, logo);
    reply.code(201);
    return { data: { brand: created } };
  });

  app.put('/brand', {
    schema: {
      operationId: 'updateBrand', tags: ['Brand'], summary: "Change the workspace's brand",
      description:
        'multipart/form-data with the brand\'s `id` and `company_name`. Fields left out stay as they are; an empty value clears one. ' +
        '`file` replaces the logo; an empty `logo` field removes it. An `id` that is not this workspace\'s brand answers 404.',
      response: { 200: Type.Object({ data: Type.Object({ brand: BrandRef }), meta: Type.Object({}) }), ...errorResponses(404) },
    },
    config: { scope: 'brand:write', feature: 'brand', multipartBody: UpdateBrandBody },
  }, async (request) => {
    const { fields, logo } = await readForm(request);
    const { logo: removeLogo, ...input } = checkFields(UpdateBrandFields, fields) as BrandFieldsInput & { id: number; logo?: '' };
    const updated = await brand.update(authOf(request), { ...input, removeLogo: removeLogo === '' && !logo }, logo);
    return { data: { brand: updated }, meta: {} };
  });

  app.post('/toggle-take-over-branding', {
    schema: {
      operationId: 'toggleTakeOverBranding', tags: ['Brand'], summary: 'Turn brand take-over on or off',
      description:
        'Flips `take_over_branding` and returns the brand with the new value. While on, every public flipbook of the workspace shows the brand ' +
        '(logo, colors, social links, Google Analytics) instead of the service\'s, without the "made with" badge; turning it off restores the default at once. ' +
        'Needs the Company plan. 404 when the workspace has no brand.',
      response: { 200: Type.Object({ data: Type.Object({ brand: BrandRef }) }), ...errorResponses(404) },
    },
    config: { scope: 'brand:write', feature: 'take_over_branding' },
  }, async (request) => ({ data: { brand: await brand.toggleTakeOver(authOf(request)) } }));
};
