import { useEffect, useState } from 'preact/hooks';
import { toFormData } from '@flipbook/client';
import { call, client, managesPeople, type DataOf, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Select } from '../components/select.tsx';
import { Page } from '../components/page.tsx';
import { notify } from '../components/toast.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { useResource } from '../resource.ts';

type Brand = NonNullable<DataOf<'/v1/brand', 'get'>['brand']>;

const TEXT_FIELDS = ['company_name', 'about_brand', 'contact_number', 'website_url', 'google_analytics'] as const;
const COLORS = [
  { name: 'primary_color', label: 'Bar colour', hint: 'The reader’s bars.' },
  { name: 'secondary_color', label: 'Accent colour', hint: 'The reader’s buttons and highlights.' },
  { name: 'tertiary_color', label: 'Background colour', hint: 'Behind the pages.' },
] as const;
const SOCIAL = [
  { name: 'twitter', label: 'X (Twitter)' },
  { name: 'linkedin', label: 'LinkedIn' },
  { name: 'facebook', label: 'Facebook' },
  { name: 'youtube', label: 'YouTube' },
  { name: 'instagram', label: 'Instagram' },
  { name: 'pinterest', label: 'Pinterest' },
] as const;
type FieldName = (typeof TEXT_FIELDS)[number] | (typeof COLORS)[number]['name'] | (typeof SOCIAL)[number]['name'];
type Form = Record<FieldName, string>;

function formOf(brand: Brand | null): Form {
  return {
    company_name: brand?.company_name ?? '',
    about_brand: brand?.about_brand ?? '',
    contact_number: brand?.contact_number ?? '',
    website_url: brand?.website_url ?? '',
    google_analytics: brand?.google_analytics ?? '',
    primary_color: brand?.brand_color?.primary_color ?? '',
    secondary_color: brand?.brand_color?.secondary_color ?? '',
    tertiary_color: brand?.brand_color?.tertiary_color ?? '',
    twitter: brand?.brand_social_media?.twitter ?? '',
    linkedin: brand?.brand_social_media?.linkedin ?? '',
    facebook: brand?.brand_social_media?.facebook ?? '',
    youtube: brand?.brand_social_media?.youtube ?? '',
    instagram: brand?.brand_social_media?.instagram ?? '',
    pinterest: brand?.brand_social_media?.pinterest ?? '',
  };
}
const same = (a: Form, b: Form) => (Object.keys(a) as FieldName[]).every((k) => a[k] === b[k]);
const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;

/** Brand: the workspace's company name, logo, colours and links, with a preview of a reader page wearing them; brand take-over. */
export default function BrandScreen() {
  const brand = useResource(() => call(client.GET('/v1/brand')));
  if (brand.data === undefined) {
    return (
      <Page title="Brand">
        {brand.loading && <Loading what="the brand" />}
        <ErrorMessage problem={brand.problem} title="The brand could not be read" />
      </Page>
    );
  }
  return <BrandForm key={brand.data.brand?.updated_at ?? 'new'} brand={brand.data.brand} reload={brand.reload} />;
}

function BrandForm({ brand, reload }: { brand: Brand | null; reload: () => Promise<void> }) {
  const writes = managesPeople.value;
  const initial = formOf(brand);
  const draft = useDraft<Form>(draftKey('brand', 'workspace'), () => initial, { base: brand?.updated_at ?? undefined, differs: (v) => !same(v, initial) });
  const form = draft.value;
  const set = (name: FieldName) => (value: string) => draft.set((f) => ({ ...f, [name]: value }));
  const [logo, setLogo] = useState<File | null>(null);
  const [logoUrl, setLogoUrl] = useState<string | null>(null);
  const [removeLogo, setRemoveLogo] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [takeOverBusy, setTakeOverBusy] = useState(false);
  const [takeOverProblem, setTakeOverProblem] = useState<Problem | null>(null);
  // A data: URL, not a blob: one: the reader's Content-Security-Policy allows images from 'self' and data: only.
  useEffect(() => {
    setLogoUrl(null);
    if (!logo) return;
    let current = true;
    // '' once read: too large to preview.
    void previewLogo(logo).then((url) => current && setLogoUrl(url ?? ''));
    return () => {
      current = false;
    };
  }, [logo]);

  const save = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const fields = { ...form, company_name: form.company_name.trim(), ...(logo ? { file: logo as unknown as string } : {}) };
    const result = brand
      ? await call(client.PUT('/v1/brand', { body: { id: brand.id, ...fields, ...(removeLogo && !logo ? { logo: '' as const } : {}) }, bodySerializer: toFormData }))
      : await call(client.POST('/v1/brand', { body: fields, bodySerializer: toFormData }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    draft.saved(formOf(result.data.brand));
    notify('The brand was saved.');
    await reload();
  };
  const takeOver = async () => {
    setTakeOverBusy(true);
    const result = await call(client.POST('/v1/toggle-take-over-branding'));
    setTakeOverBusy(false);
    setTakeOverProblem(result.ok ? null : result.problem);
    if (result.ok) {
      notify(result.data.brand.take_over_branding ? 'Brand take-over is on: the public books show your brand.' : 'Brand take-over is off.');
      await reload();
    }
  };

  const shownLogo = { chosen: logoUrl || null, removed: removeLogo, unshown: !!logo && logoUrl === '' };
  const errors = (name: string) => fieldErrors(problem, name);
  const readOnly = !writes;
  return (
    <Page title="Brand">
      <p>Your brand replaces the service's own in the public reader while brand take-over is on: the logo and company name, the colours, and your links.</p>
      {!writes && <p class="alert">Only admins and owners change the brand. You see it as it is.</p>}
      <div class="brand-layout">
        <form class="card stack" onSubmit={save} noValidate aria-labelledby="brand-form">
          <h2 id="brand-form">Brand settings</h2>
          <DraftNotice restored={draft.restored} onDiscard={() => draft.discard(initial)} />
          <TextInput label="Company name" value={form.company_name} onValue={set('company_name')} errors={errors('company_name')} readOnly={readOnly} autoComplete="organization" />
          <Field label="Logo" hint="A JPEG, PNG, WebP or GIF image of at most 2 MB; it is shown in the reader’s bar." errors={errors('file')}>
            {(control) => (
              <input {...control} type="file" accept="image/jpeg,image/png,image/webp,image/gif" disabled={readOnly} onChange={(event) => { setLogo(event.currentTarget.files?.[0] ?? null); setRemoveLogo(false); }} />
            )}
          </Field>
          {brand?.logo && writes && (
            <label class="check">
              <input type="checkbox" checked={removeLogo} disabled={!!logo} onChange={(event) => setRemoveLogo(event.currentTarget.checked)} />
              Remove the logo
            </label>
          )}
          <Field label="About the brand" errors={errors('about_brand')}>
            {(control) => <textarea {...control} rows={3} value={form.about_brand} readOnly={readOnly} onInput={(event) => set('about_brand')(event.currentTarget.value)} />}
          </Field>
          <TextInput label="Contact number" type="text" value={form.contact_number} onValue={set('contact_number')} errors={errors('contact_number')} readOnly={readOnly} autoComplete="tel" />
          <TextInput label="Website" hint="Where the logo links to, e.g. https://example.com." value={form.website_url} onValue={set('website_url')} errors={errors('website_url')} readOnly={readOnly} autoComplete="url" />
          <TextInput label="Google Analytics measurement id" hint="G-XXXXXXX; loaded by the reader only while take-over is on." value={form.google_analytics} onValue={set('google_analytics')} errors={errors('google_analytics')} readOnly={readOnly} autoComplete="off" />
          <fieldset>
            <legend>Colours</legend>
            {COLORS.map((c) => (
              <div class="color-row" key={c.name}>
                <TextInput label={c.label} hint={`${c.hint} #rgb or #rrggbb; empty for the default.`} value={form[c.name]} onValue={set(c.name)} errors={errors(c.name)} readOnly={readOnly} autoComplete="off" spellcheck={false} />
                <span class="swatch" aria-hidden="true" style={{ background: HEX.test(form[c.name]) ? form[c.name] : 'transparent' }} />
              </div>
            ))}
          </fieldset>
          <fieldset>
            <legend>Social links</legend>
            {SOCIAL.map((s) => (
              <TextInput key={s.name} label={s.label} value={form[s.name]} onValue={set(s.name)} errors={errors(s.name)} readOnly={readOnly} autoComplete="url" />
            ))}
          </fieldset>
          <ErrorMessage problem={problem} shownFields={[...TEXT_FIELDS, ...COLORS.map((c) => c.name), ...SOCIAL.map((s) => s.name), 'file']} title="The brand was not saved" />
          {writes && <Button type="submit" variant="primary" busy={busy}>Save brand</Button>}
        </form>
        <section class="card stack" aria-labelledby="brand-preview">
          <h2 id="brand-preview">Preview</h2>
          <p class="hint">The reader with the brand as typed, before it is saved.</p>
          <BrandPreview form={form} logo={shownLogo} />
          <h2 id="take-over">Brand take-over</h2>
          <p>{brand?.take_over_branding ? 'On: every public book of the workspace shows this brand instead of the service’s, without the “made with” badge.' : 'Off: the public books show the service’s own brand.'}</p>
          {!brand && <p class="hint">Save the brand first.</p>}
          <ErrorMessage problem={takeOverProblem} title="Brand take-over was not changed" />
          {writes && brand && (
            <Button onClick={takeOver} busy={takeOverBusy}>{brand.take_over_branding ? 'Turn off brand take-over' : 'Turn on brand take-over'}</Button>
          )}
        </section>
      </div>
    </Page>
  );
}

const URL_LIKE = /^https?:\/\/[^\s/$.?#]\S*$/i;
/** The most characters of a logo in the preview's address (the reader's PREVIEW_LOGO_MAX_CHARS). */
const PREVIEW_LOGO_MAX = 8192;

/**
 * A logo chosen but not saved, as a data: URL small enough to travel in the preview's address: drawn at twice the
 * reader bar's size (64 px high, 320 wide at most) as WebP, smaller again if need be; null if it still does not fit.
 */
async function previewLogo(file: File): Promise<string | null> {
  try {
    const bitmap = await createImageBitmap(file);
    for (const [height, quality] of [[64, 0.85], [32, 0.7]] as const) {
      const scale = Math.min(height / bitmap.height, (height * 5) / bitmap.width, 1);
      const canvas = document.createElement('canvas');
      canvas.width = Math.max(1, Math.round(bitmap.width * scale));
      canvas.height = Math.max(1, Math.round(bitmap.height * scale));
      canvas.getContext('2d')?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      const url = canvas.toDataURL('image/webp', quality);
      if (url.length <= PREVIEW_LOGO_MAX && /^data:image\/(webp|png);/.test(url)) return url;
    }
  } catch {
    // Not an image the browser reads: the save will say so.
  }
  return null;
}

/**
 * The preview's brand: the form's fields the reader shows, those not yet valid left out (so that half a URL
 * typed does not turn the preview into a refusal); `logo` omitted keeps the saved one, empty removes it.
 */
function previewBrand(form: Form, logo: { removed: boolean; chosen: string | null }): Record<string, string> {
  const brand: Record<string, string> = { company_name: form.company_name.trim() || 'Your company' };
  for (const c of COLORS) if (HEX.test(form[c.name])) brand[c.name] = form[c.name];
  for (const name of ['website_url', ...SOCIAL.map((s) => s.name)] as const) if (URL_LIKE.test(form[name].trim())) brand[name] = form[name].trim();
  if (logo.chosen) brand.logo = logo.chosen;
  else if (logo.removed) brand.logo = '';
  return brand;
}

/** The most recently updated books offered for the preview (one page of the API's list). */
const PREVIEW_BOOKS = 100;

/** The reader itself (its preview route) showing a book of the workspace (the latest one unless another is chosen) wearing the brand as typed. */
function BrandPreview({ form, logo }: { form: Form; logo: { removed: boolean; chosen: string | null; unshown: boolean } }) {
  const books = useResource(() => call(client.GET('/v1/books', { params: { query: { limit: PREVIEW_BOOKS, sort: '-updated_at' } } })));
  const [chosen, setChosen] = useState<string | null>(null);
  const book = books.data?.find((b) => b.random_id === chosen) ?? books.data?.[0];
  const url = book ? `/read/${encodeURIComponent(book.random_id)}/preview?brand=${encodeURIComponent(JSON.stringify(previewBrand(form, logo)))}` : null;
  const [shown, setShown] = useState(url);
  // The preview follows the form a moment after the last change (one reload of the reader, not one per key).
  useEffect(() => {
    const timer = setTimeout(() => setShown(url), 300);
    return () => clearTimeout(timer);
  }, [url]);
  if (books.data === undefined) return <>{books.loading && <Loading what="a book to preview" />}<ErrorMessage problem={books.problem} title="No book could be read for the preview" /></>;
  if (!book) return <p>Upload a book to see it here in the reader with your brand.</p>;
  return (
    <>
      {books.data.length > 1 && (
        <Select label="Book to preview" hint={books.data.length === PREVIEW_BOOKS ? `The ${PREVIEW_BOOKS} most recently changed books.` : undefined} value={book.random_id}
          options={books.data.map((b) => ({ value: b.random_id, label: b.name }))} onValue={setChosen} />
      )}
      <iframe class="reader-frame" src={shown ?? url ?? undefined} title={`Preview: ${book.name} with the brand of ${form.company_name.trim() || 'your company'}`} />
      {logo.unshown && <p class="hint">The chosen logo is too detailed to preview here; it will show once saved.</p>}
    </>
  );
}
