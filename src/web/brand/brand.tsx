import { useEffect, useState } from 'preact/hooks';
import { toFormData } from '@flipbook/client';
import { call, client, managesPeople, type DataOf, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
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
  // A data: URL, not a blob: one: the application's Content-Security-Policy allows images from 'self' and data: only.
  useEffect(() => {
    if (!logo) return setLogoUrl(null);
    const reader = new FileReader();
    reader.onload = () => setLogoUrl(typeof reader.result === 'string' ? reader.result : null);
    reader.readAsDataURL(logo);
    return () => reader.abort();
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

  const shownLogo = logoUrl ?? (removeLogo ? null : brand?.logo ?? null);
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
          <p class="hint">A reader page with the brand as typed, before it is saved.</p>
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

/** The text colour that reads best on a background (as the reader picks it). */
function readableOn(hex: string): string {
  const full = hex.length === 4 ? `#${hex[1]}${hex[1]}${hex[2]}${hex[2]}${hex[3]}${hex[3]}` : hex;
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(full.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const luminance = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return luminance > 0.179 ? '#000000' : '#ffffff';
}

/** A sketch of the reader's frame with the brand's bar, accent, background, logo and links. */
function BrandPreview({ form, logo }: { form: Form; logo: string | null }) {
  const bar = HEX.test(form.primary_color) ? form.primary_color : '#1b1f24';
  const accent = HEX.test(form.secondary_color) ? form.secondary_color : '#1f4fd1';
  const stage = HEX.test(form.tertiary_color) ? form.tertiary_color : '#4d5560';
  const name = form.company_name.trim() || 'Your company';
  const links = SOCIAL.filter((s) => form[s.name]);
  return (
    <figure class="brand-preview" role="img" aria-label={`Preview of a reader page with the brand of ${name}`}>
      <div class="brand-preview-bar" style={{ background: bar, color: readableOn(bar) }}>
        {logo ? <img src={logo} alt="" class="brand-preview-logo" /> : <span>{name}</span>}
        <span class="brand-preview-links">{links.map((s) => s.label).join(' · ')}</span>
      </div>
      <div class="brand-preview-stage" style={{ background: stage }}>
        <div class="brand-preview-page" />
        <div class="brand-preview-page" />
      </div>
      <div class="brand-preview-bar" style={{ background: bar, color: readableOn(bar) }}>
        <span class="brand-preview-button" style={{ background: accent, color: readableOn(accent) }}>Share</span>
        <span>Page 1–2 of 12</span>
      </div>
    </figure>
  );
}
