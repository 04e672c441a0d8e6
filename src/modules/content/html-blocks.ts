/**
 * HTML sent as content (posts, pages, product descriptions) is laid out, never
 * executed or passed through: sanitize-html keeps an allow-list of text
 * elements (no script, style, iframe, event handler or foreign URL scheme),
 * then htmlparser2 turns what is left into the blocks the PDF renderer draws.
 */
import { parseDocument } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';

export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'quote'; text: string }
  | { kind: 'list-item'; text: string; marker: string; depth: number }
  | { kind: 'image'; src: string; alt: string };

const ALLOWED_TAGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'ul', 'ol', 'li', 'blockquote', 'img', 'a', 'strong', 'b', 'em', 'i', 'u', 'span', 'div', 'figure', 'figcaption', 'pre', 'code', 'table', 'tbody', 'thead', 'tr', 'td', 'th'];

export function sanitize(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: ALLOWED_TAGS,
    allowedAttributes: { a: ['href'], img: ['src', 'alt'] },
    allowedSchemes: ['http', 'https'],
    allowedSchemesByTag: { img: ['http', 'https'] },
    disallowedTagsMode: 'discard',
  });
}

interface Node {
  type: string;
  name?: string;
  data?: string;
  attribs?: Record<string, string>;
  children?: Node[];
}

function textOf(node: Node): string {
  if (node.type === 'text') return node.data ?? '';
  if (node.name === 'br') return '\n';
  if (node.name === 'img' || node.name === 'ul' || node.name === 'ol') return '';
  return (node.children ?? []).map(textOf).join('');
}

function clean(text: string): string {
  return text.replace(/[ \t\r\f\v]+/g, ' ').replace(/ *\n */g, '\n').trim();
}

const BLOCK_TAGS = new Set(['p', 'div', 'figure', 'figcaption', 'pre', 'table', 'tbody', 'thead', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote']);

/** Sanitises HTML (or plain text) and returns it as blocks in reading order. */
export function htmlToBlocks(html: string): Block[] {
  const document = parseDocument(sanitize(html), { decodeEntities: true }) as unknown as Node;
  const blocks: Block[] = [];
  let inline = '';
  const flush = () => {
    const text = clean(inline);
    if (text) blocks.push({ kind: 'paragraph', text });
    inline = '';
  };
  const images = (node: Node) => {
    if (node.name === 'img' && node.attribs?.src) blocks.push({ kind: 'image', src: node.attribs.src, alt: node.attribs.alt ?? '' });
    for (const child of node.children ?? []) if (!BLOCK_TAGS.has(child.name ?? '')) images(child);
  };
  const walk = (node: Node, depth: number) => {
    for (const child of node.children ?? []) {
      const name = child.name ?? '';
      if (child.type === 'text') { inline += child.data ?? ''; continue; }
      if (name === 'br') { inline += '\n'; continue; }
      if (name === 'img') { flush(); images(child); continue; }
      if (/^h[1-6]$/.test(name)) {
        flush();
        const text = clean(textOf(child));
        if (text) blocks.push({ kind: 'heading', level: Number(name[1]), text });
        continue;
      }
      if (name === 'blockquote') {
        flush();
        const text = clean(textOf(child));
        if (text) blocks.push({ kind: 'quote', text });
        continue;
      }
      if (name === 'ul' || name === 'ol') {
        flush();
        let index = 0;
        for (const item of child.children ?? []) {
          if (item.name !== 'li') continue;
          index += 1;
          const text = clean(textOf(item));
          if (text) blocks.push({ kind: 'list-item', text, marker: name === 'ol' ? `${index}.` : '•', depth });
          images(item);
          for (const nested of item.children ?? []) if (nested.name === 'ul' || nested.name === 'ol') walk({ type: 'tag', children: [nested] }, depth + 1);
        }
        continue;
      }
      if (BLOCK_TAGS.has(name)) {
        flush();
        walk(child, depth);
        flush();
        continue;
      }
      // Inline elements (a, strong, em, span, code…): their text joins the paragraph; images inside come after it.
      inline += textOf(child);
      const nestedImages: Block[] = [];
      const collect = (n: Node) => {
        if (n.name === 'img' && n.attribs?.src) nestedImages.push({ kind: 'image', src: n.attribs.src, alt: n.attribs.alt ?? '' });
        for (const c of n.children ?? []) collect(c);
      };
      collect(child);
      if (nestedImages.length) { flush(); blocks.push(...nestedImages); }
    }
  };
  walk(document, 0);
  flush();
  return blocks;
}

/** Plain text of an HTML fragment (descriptions in product cells). */
export function htmlToText(html: string): string {
  return htmlToBlocks(html).filter((b) => b.kind !== 'image').map((b) => ('text' in b ? b.text : '')).join('\n');
}
