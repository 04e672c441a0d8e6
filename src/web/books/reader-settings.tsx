import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso/router';
import type { operations } from '@flipbook/client';
import { call, client, rank, role, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Select } from '../components/select.tsx';
import { notify } from '../components/toast.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { useResource } from '../resource.ts';
import { bookHref, type Book } from './book-facts.ts';

type Update = operations['updateBook']['requestBody']['content']['application/json'];

/** The form's values, in PUT /v1/books/{book}'s field names. */
interface Form {
  animation_type: NonNullable<Update['animation_type']>;
  mobile_animation_type: Update['mobile_animation_type'] | '';
  reading_direction: NonNullable<Update['reading_direction']>;
  page_layout: NonNullable<Update['page_layout']>;
  autoplay_interval: string;
  background: string;
  image_display: Update['image_display'] | '';
  watermark: string;
  allow_fullscreen: boolean;
  open_fullscreen_by_default: boolean;
  flip_sound: boolean;
  downloadable_pdf: boolean;
  made_with_badge_enabled: boolean;
  copyright_enabled: boolean;
  share_social_media: boolean;
  accessibility_enabled: boolean;
  auto_links_enabled: boolean;
  pdf_password: string;
}

const ANIMATIONS = ['flip', 'scroll_view', 'slide', 'fade', 'zoom', 'flick-through', 'cut'] as const;
const ANIMATION_WORDS: Record<(typeof ANIMATIONS)[number], string> = {
  flip: 'Page flip', scroll_view: 'Scroll', slide: 'Slide', fade: 'Fade', zoom: 'Zoom', 'flick-through': 'Flick through', cut: 'Cut',
};

const SWITCHES: { field: keyof Form; label: string }[] = [
  { field: 'allow_fullscreen', label: 'Allow full screen' },
  { field: 'open_fullscreen_by_default', label: 'Open in full screen' },
  { field: 'flip_sound', label: 'Page-turn sound' },
  { field: 'downloadable_pdf', label: 'Allow downloading the PDF' },
  { field: 'made_with_badge_enabled', label: 'Show the “Made with Flipbook” badge' },
  { field: 'copyright_enabled', label: 'Show the copyright line' },
  { field: 'share_social_media', label: 'Show sharing' },
  { field: 'accessibility_enabled', label: 'Text view for screen readers' },
  { field: 'auto_links_enabled', label: 'Make web and e-mail addresses links' },
];

function formOf(book: Book): Form {
  const s = book.settings;
  return {
    animation_type: (ANIMATIONS as readonly string[]).includes(s.animation_type) ? s.animation_type as Form['animation_type'] : 'flip',
    mobile_animation_type: (s.mobile_animation_type ?? '') as Form['mobile_animation_type'],
    reading_direction: s.reading_direction,
    page_layout: s.page_layout,
    autoplay_interval: s.autoplay_interval === null ? '' : String(s.autoplay_interval),
    background: s.background ?? '',
    image_display: (s.image_display ?? '') as Form['image_display'],
    watermark: s.watermark ?? '',
    allow_fullscreen: s.fullscreen_enabled,
    open_fullscreen_by_default: s.open_fullscreen_by_default,
    flip_sound: s.sound_enabled,
    downloadable_pdf: s.downloadable,
    made_with_badge_enabled: s.made_with_badge_enabled,
    copyright_enabled: s.copyright_enabled,
    share_social_media: s.share_social_media,
    accessibility_enabled: s.accessibility_enabled,
    auto_links_enabled: s.auto_links_enabled,
    pdf_password: '',
  };
}

/** The settings part of the form, as the update body (and the preview) take it. */
function settingsOf(form: Form, book: Book): Omit<Update, 'status'> {
  const interval = Number(form.autoplay_interval);
  return {
    animation_type: form.animation_type,
    ...(form.mobile_animation_type ? { mobile_animation_type: form.mobile_animation_type } : {}),
    reading_direction: form.reading_direction,
    page_layout: form.page_layout,
    autoplay_interval: form.autoplay_interval.trim() === '' ? null : Number.isFinite(interval) ? interval : (form.autoplay_interval as unknown as number),
    // Empty and never set: left out, so that an untouched field changes nothing.
    ...(form.background || book.settings.background ? { background: form.background } : {}),
    ...(form.image_display ? { image_display: form.image_display } : {}),
    ...(form.watermark || book.settings.watermark ? { watermark: form.watermark } : {}),
    allow_fullscreen: form.allow_fullscreen,
    open_fullscreen_by_default: form.open_fullscreen_by_default,
    flip_sound: form.flip_sound,
    downloadable_pdf: form.downloadable_pdf,
    made_with_badge_enabled: form.made_with_badge_enabled,
    copyright_enabled: form.copyright_enabled,
    share_social_media: form.share_social_media,
    accessibility_enabled: form.accessibility_enabled,
    auto_links_enabled: form.auto_links_enabled,
  };
}

/** Reader settings: every setting of the book, shown in the reader beside the form as it changes, saved with the book's settings_revision. */
export default function ReaderSettings() {
  const { params } = useRoute();
  const bookId = params.bookId!;
  const book = useResource(() => call(client.GET('/v1/books/{book}', { params: { path: { book: bookId } } })));
  if (!book.data) {
    return (
      <Page title="Reader settings">
        {book.loading && <Loading what="the book" />}
        <ErrorMessage problem={book.problem} title="The book could not be read" />
      </Page>
    );
  }
  return <SettingsForm book={book.data} />;
}

/**
 * What the form keeps over a reload: the values, the settings they started
 * from and that start's revision. A draft restored after someone else saved
 * is sent with its own (older) revision, so the API's conflict check shows
 * the change instead of the draft overwriting it.
 */
interface Kept {
  form: Form;
  from: Form;
  revision: string;
}

const same = (a: Form, b: Form) => JSON.stringify(a) === JSON.stringify(b);
const fresh = (book: Book): Kept => ({ form: formOf(book), from: formOf(book), revision: book.settings_revision });

function SettingsForm({ book: initial }: { book: Book }) {
  const writes = rank(role.value) >= rank('editor');
  const [book, setBook] = useState(initial);
  const draft = useDraft(draftKey('reader-settings', initial.random_id), () => fresh(initial), {
    // The download password is a secret: never kept in the browser.
    strip: (kept) => ({ ...kept, form: { ...kept.form, pdf_password: '' } }),
    differs: (kept) => !same({ ...kept.form, pdf_password: '' }, kept.from),
  });
  const form = draft.value.form;
  const setForm = (change: (f: Form) => Form) => draft.set((kept) => ({ ...kept, form: change(kept.form) }));
  const [preview, setPreview] = useState(() => previewUrl(initial, form));
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [conflict, setConflict] = useState(false);
  const set = <K extends keyof Form>(field: K, value: Form[K]) => setForm((f) => ({ ...f, [field]: value }));

  // The preview follows the form a moment after the last change (one reload of the reader, not one per key).
  useEffect(() => {
    const timer = setTimeout(() => setPreview(previewUrl(book, form)), 300);
    return () => clearTimeout(timer);
  }, [form, book]);

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const body: Update = { status: book.status as Update['status'], ...settingsOf(form, book), settings_revision: draft.value.revision, ...(form.pdf_password ? { pdf_password: form.pdf_password } : {}) };
    const result = await call(client.PUT('/v1/books/{book}', { params: { path: { book: book.random_id } }, body }));
    setBusy(false);
    if (!result.ok) {
      setConflict(result.problem.status === 409);
      return setProblem(result.problem);
    }
    setProblem(null);
    setConflict(false);
    setBook(result.data);
    draft.saved(fresh(result.data));
    notify('The reader settings were saved.');
  };

  // Keeps what was typed; the next Save applies it over the settings as they are now.
  const readAgain = async () => {
    const result = await call(client.GET('/v1/books/{book}', { params: { path: { book: book.random_id } } }));
    if (!result.ok) return setProblem(result.problem);
    // What this person changed, over the settings as they are now.
    const before = draft.value.from;
    const mine = Object.fromEntries(Object.entries(form).filter(([field, value]) => before[field as keyof Form] !== value));
    draft.set({ form: { ...formOf(result.data), ...mine }, from: formOf(result.data), revision: result.data.settings_revision });
    setBook(result.data);
    setProblem(null);
    setConflict(false);
    notify('The book was read again. Your changes are kept: save to apply them over the new settings.');
  };

  const editable = { disabled: !writes };
  return (
    <Page title={`Reader settings: ${book.name}`}>
      <p><a href={bookHref(book)}>Back to the book</a></p>
      <div class="book-layout">
        <section aria-labelledby="preview-heading" class="settings-preview">
          <h2 id="preview-heading">Preview</h2>
          <p class="hint">The reader as it looks with these settings, before they are saved.</p>
          <iframe class="reader-frame" src={preview} title={`Preview: ${book.name}`} allow="fullscreen" />
        </section>
        <form class="card stack" aria-labelledby="settings-heading" onSubmit={save}>
          <h2 id="settings-heading">Settings</h2>
          {conflict && (
            <div class="alert alert-error" role="alert">
              <p class="alert-title">Someone changed these settings meanwhile</p>
              <p>Your changes were not saved, and theirs were not overwritten. Read the book again to see theirs; what you changed here stays in the form.</p>
              <Button onClick={readAgain}>Read the book again</Button>
            </div>
          )}
          <DraftNotice restored={draft.restored} onDiscard={() => draft.discard(fresh(book))} />
          {!conflict && <ErrorMessage problem={problem} shownFields={Object.keys(form)} title="The settings were not saved" />}
          <Select label="Animation" value={form.animation_type} options={ANIMATIONS.map((a) => ({ value: a, label: ANIMATION_WORDS[a] }))} onValue={(v) => set('animation_type', v as Form['animation_type'])} errors={fieldErrors(problem, 'animation_type')} />
          <Select label="Animation on phones" value={form.mobile_animation_type ?? ''} options={[{ value: '', label: 'Same as above' }, ...ANIMATIONS.map((a) => ({ value: a, label: ANIMATION_WORDS[a] }))]} onValue={(v) => set('mobile_animation_type', v as Form['mobile_animation_type'])} errors={fieldErrors(problem, 'mobile_animation_type')} />
          <Select label="Reading direction" value={form.reading_direction} options={[{ value: 'ltr', label: 'Left to right' }, { value: 'rtl', label: 'Right to left' }]} onValue={(v) => set('reading_direction', v as Form['reading_direction'])} errors={fieldErrors(problem, 'reading_direction')} />
          <Select label="Page layout" value={form.page_layout} options={[{ value: 'auto', label: 'Automatic' }, { value: 'single', label: 'One page' }, { value: 'double', label: 'Two pages side by side' }]} onValue={(v) => set('page_layout', v as Form['page_layout'])} errors={fieldErrors(problem, 'page_layout')} />
          <TextInput label="Slideshow: seconds per view" hint="2 to 120; empty for no slideshow." inputMode="numeric" value={form.autoplay_interval} onValue={(v) => set('autoplay_interval', v)} errors={fieldErrors(problem, 'autoplay_interval')} {...editable} />
          <TextInput label="Background" hint="A colour (#1f2a44) or an image's https address; empty for the default." value={form.background} onValue={(v) => set('background', v)} errors={fieldErrors(problem, 'background')} {...editable} />
          <Select label="Background image" value={form.image_display ?? ''} options={[{ value: '', label: 'Default' }, { value: 'center/cover', label: 'Cover the page' }, { value: 'repeat', label: 'Repeat' }]} onValue={(v) => set('image_display', v as Form['image_display'])} errors={fieldErrors(problem, 'image_display')} />
          <TextInput label="Watermark" hint="Text drawn over every page; empty for none." value={form.watermark} onValue={(v) => set('watermark', v)} errors={fieldErrors(problem, 'watermark')} {...editable} />
          <fieldset>
            <legend>Reader features</legend>
            {SWITCHES.map(({ field, label }) => (
              <label class="check" key={field}>
                <input type="checkbox" checked={form[field] as boolean} onChange={(event) => set(field, event.currentTarget.checked as never)} {...editable} />
                {label}
              </label>
            ))}
          </fieldset>
          <TextInput label="Download password" type="password" autoComplete="new-password" hint={book.settings.has_pdf_password ? 'Downloads ask for a password now. Type a new one to change it.' : 'Optional: downloads then ask for it.'} value={form.pdf_password} onValue={(v) => set('pdf_password', v)} errors={fieldErrors(problem, 'pdf_password')} {...editable} />
          {writes ? <Button type="submit" variant="primary" busy={busy}>Save</Button> : <p>Viewers can try settings in the preview; saving them needs the editor role.</p>}
        </form>
      </div>
    </Page>
  );
}

function previewUrl(book: Book, form: Form): string {
  return `/read/${encodeURIComponent(book.random_id)}/preview?settings=${encodeURIComponent(JSON.stringify(settingsOf(form, book)))}`;
}
