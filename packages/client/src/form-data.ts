/**
 * The body of a multipart/form-data operation (an upload, the brand with its
 * logo) as FormData, for openapi-fetch's `bodySerializer`:
 *
 *   client.POST('/v1/brand', { body: { company_name: 'Acme', file: logo as unknown as string }, bodySerializer: toFormData })
 *
 * The generated types give binary fields as `string`; pass the Blob or File
 * with a cast. Blobs become files, arrays repeated fields, other values text
 * (`true`, `12`); undefined and null fields are left out.
 */
export function toFormData(body: unknown): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      if (item instanceof Blob) form.append(name, item);
      else form.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
  }
  return form;
}
