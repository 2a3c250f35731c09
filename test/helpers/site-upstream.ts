/**
 * A small site, written for the end-to-end tests of issue 21: one route per row of its table
 * (dynamic pages, an API, drafts, forms, assets, an image optimizer) and of its Astro section.
 * It counts what it runs, so a test can tell a cached answer from a rendered one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { startHttpServer } from './http-server.js';

const cookieOf = (req: IncomingMessage) => req.headers.cookie ?? '';

/** Routes by path; `state` changes what the site answers (a deploy, a counter). */
export async function startSiteUpstream() {
  const state = { apiCalls: 0, deployed: new Set<string>(), renders: new Map<string, number>() };
  const route = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://site');
    const path = url.pathname;
    state.renders.set(path, (state.renders.get(path) ?? 0) + 1);
    if (req.method === 'POST' && path === '/form') {
      res.writeHead(303, [
        ['location', '/thanks'],
        ['set-cookie', `flash=${body.toString()}; Path=/`],
        ['set-cookie', 'seen=1; HttpOnly'],
      ]);
      return void res.end();
    }
    if (path === '/dynamic') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'private, no-cache, no-store, max-age=0, must-revalidate',
        'set-cookie': 'visited=1',
      });
      return void res.end(`<p>hello ${cookieOf(req) || 'stranger'} ${url.search}</p>`);
    }
    if (path === '/api/data') {
      state.apiCalls += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ calls: state.apiCalls }));
    }
    if (path === '/post') {
      const draft = cookieOf(req).includes('__draft=');
      res.writeHead(200, {
        'content-type': 'text/html',
        'cache-control': draft ? 'private, no-store' : 'public, s-maxage=60',
      });
      return void res.end(draft ? '<p>draft</p>' : '<p>published</p>');
    }
    if (path === '/_next/static/app.js') {
      const gzip = /gzip/.test(String(req.headers['accept-encoding']));
      res.writeHead(200, {
        'content-type': 'application/javascript',
        'cache-control': 'public, max-age=31536000, immutable',
        ...(gzip ? { 'content-encoding': 'gzip', vary: 'Accept-Encoding' } : {}),
      });
      return void res.end(gzip ? gzipSync('console.log(1)') : 'console.log(1)');
    }
    if (path === '/_next/image') {
      const webp = /image\/webp/.test(String(req.headers.accept));
      res.writeHead(200, {
        'content-type': webp ? 'image/webp' : 'image/png',
        'cache-control': 'public, max-age=60',
        vary: 'Accept',
      });
      return void res.end(
        Buffer.from([webp ? 1 : 2, 0xff, 0x00, Number(url.searchParams.get('w'))]),
      );
    }
    if (path === '/slashy') {
      res.writeHead(301, { location: '/slashy/' });
      return void res.end();
    }
    if (path === '/slashy/') {
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'public, s-maxage=60' });
      return void res.end('<p>slashy</p>');
    }
    if (path.startsWith('/_server-islands/')) {
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'public, s-maxage=60' });
      return void res.end(`<p>island ${url.search}</p>`);
    }
    if (path === '/prerendered') {
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'public, max-age=0' });
      return void res.end(`<p>prerendered ${state.renders.get(path)}</p>`);
    }
    if (path === '/old') {
      res.writeHead(301, { location: '/new', 'cache-control': 'public, max-age=300' });
      return void res.end();
    }
    if (path.startsWith('/_astro/')) {
      const there = state.deployed.has(path);
      res.writeHead(there ? 200 : 404, {
        'content-type': there ? 'application/javascript' : 'text/html',
        'cache-control': there ? 'public, max-age=31536000, immutable' : 'public, max-age=60',
      });
      return void res.end(there ? 'export {}' : '<p>not found</p>');
    }
    res.writeHead(404, {
      'content-type': 'text/html',
      'cache-control': 'private, no-cache, no-store, max-age=0, must-revalidate',
    });
    res.end('<p>no such page</p>');
  };
  const server = await startHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => route(req, res, Buffer.concat(chunks)));
  });
  return { ...server, state };
}

export type SiteUpstream = Awaited<ReturnType<typeof startSiteUpstream>>;
