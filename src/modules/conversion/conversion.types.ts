/**
 * Shapes shared by the conversion engine and its callers. Every position is a
 * fraction (0..1) of the page as displayed (after /Rotate), origin top-left, so
 * a viewer can place overlays on any rendition without knowing its pixel size.
 */

export interface NormalisedRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A run of text on a page, as pdf.js groups it (usually a line fragment), in logical (reading) order. */
export interface TextItem extends NormalisedRect {
  text: string;
  /** Set when the run reads right to left (Arabic, Hebrew): its first character is at the box's far end. */
  dir?: 'rtl';
  /**
   * Clockwise angle of the run's baseline on the displayed page, in degrees
   * (90: reads top to bottom, 180: upside down, 270: bottom to top); absent
   * for ordinary horizontal text.
   */
  angle?: number;
}

export type LinkTarget = { url: string; page?: never } | { page: number; url?: never };

/**
 * A clickable area. `source` tells a link annotation in the PDF from one found
 * in the page text by auto-link detection.
 */
export type PageLink = NormalisedRect & LinkTarget & { source: 'annotation' | 'text' };

export type ImageFormat = 'webp' | 'jpeg';

export interface PageImage {
  /** The requested width this image answers (index-aligned with the widths option). */
  requestedWidth: number;
  width: number;
  height: number;
  format: ImageFormat;
  /** Written under `<workDir>/pages/`; the caller owns workDir and removes it. */
  path: string;
  bytes: number;
}

/**
 * Something the conversion could not reproduce faithfully while the document
 * still converted: shown to the uploader on the batch and the page, and logged.
 */
export interface ConversionWarning {
  /** Stable: image_too_large, image_damaged, font_not_drawn, page_failed, fonts_substituted; books from content: image_unavailable, items_missing. */
  code: string;
  /** Written for the uploader: what is missing and what to do. */
  message: string;
}

export interface RenderedPage {
  /** 1-based. */
  number: number;
  /** Page size in PDF points (1/72 in) after rotation. */
  widthPt: number;
  heightPt: number;
  images: PageImage[];
  text: TextItem[];
  links: PageLink[];
  /**
   * Set when this page could not be rendered (damaged content, render timeout):
   * the images are then blank white pages of the right size so page numbering
   * stays intact, and this says why.
   */
  error?: string;
  /** An uploaded image's own size in pixels (upright): its renditions go up to it, never beyond. */
  sourcePixels?: { width: number; height: number };
  /** Content left out of an otherwise rendered page (an image too large or damaged to draw). */
  warnings?: ConversionWarning[];
}

export interface OutlineEntry {
  title: string;
  /** 1-based page, or null when the entry points nowhere we can resolve. */
  page: number | null;
  /** Set instead of a page when the entry opens a web address. */
  url?: string;
  children: OutlineEntry[];
}

export interface DocumentInfo {
  pageCount: number;
  outline: OutlineEntry[];
  title: string | null;
}
