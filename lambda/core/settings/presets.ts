/**
 * The values of the named presets (`PRESETS` in table.ts): defaults for a kind of upstream,
 * applied under any value the user gives. docs/NEXTJS.md explains the `nextjs` one.
 */
import type { Values } from './engine.js';

/**
 * The headers Next.js's App Router selects an RSC payload with (docs/NEXTJS.md): `rsc: 1`,
 * `next-router-prefetch` 1-3 (other values Next treats as absent), and the segment prefetch's
 * request key, whose charset is Next's segment encoding (`[A-Za-z0-9_\-@$!/]`, base64url adds
 * nothing), bounded in length because Next does not bound it.
 */
export const NEXT_VARIANT_HEADERS = [
  { name: 'rsc', values: ['1'] },
  { name: 'next-router-prefetch', values: ['1', '2', '3'] },
  { name: 'next-router-segment-prefetch', charset: 'A-Za-z0-9_\\-@$!/', maxLength: 256 },
] as const;

/**
 * Next.js's image optimizer: `/_next/image?url=/photo.png&w=640&q=75`, keyed on those three and
 * the formats the viewer accepts (Next answers AVIF, WebP or the source's own format). Widths and
 * qualities are bounded loosely here: Next answers 400 to one its config does not list.
 */
export const NEXT_IMAGE_RULE = {
  path: '/_next/image',
  params: [
    { name: 'url', kind: 'path', max: 2048 },
    { name: 'w', kind: 'int', max: 8192 },
    { name: 'q', kind: 'int', max: 100 },
  ],
  accept: 'image',
} as const;

/** A Next.js (App Router) site under `next start`: docs/NEXTJS.md. */
export const NEXTJS_PRESET = {
  variantHeaders: NEXT_VARIANT_HEADERS,
  variantParam: 'next-rsc',
  nextCacheHeader: true,
  ignoredQueryParams: ['_rsc'],
  bypassCookies: ['__next_preview_data', '__prerender_bypass'],
  bypassHeaders: ['next-url'],
  bypassPaths: ['/_next/data/**', '/api/**'],
  staticPrefixes: ['/_next/static/'],
  keyRules: [NEXT_IMAGE_RULE],
} as const satisfies Values;
