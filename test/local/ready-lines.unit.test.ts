/** The lines `npm start` prints once it serves (issue 35, item 10). */
import { describe, expect, it } from '@jest/globals';
import { readyLines } from '../../local/ready-lines.js';

const url = 'http://localhost:3000';

describe('readyLines', () => {
  it('suggests /hello with the demo renderer, which renders it', () => {
    expect(
      readyLines({
        url,
        renderOriginUrl: undefined,
        defaultRevalidateSeconds: 10,
        preset: undefined,
      }),
    ).toEqual({
      renderer: 'rendering with: demo renderer (revalidate 10 s)',
      ready: `ISR ready on ${url}  try: curl -i ${url}/hello`,
    });
  });

  it("names the preset, and suggests the upstream's home page, not the demo's /hello", () => {
    const lines = readyLines({
      url,
      renderOriginUrl: 'http://127.0.0.1:3001',
      defaultRevalidateSeconds: 60,
      preset: 'nextjs',
    });
    expect(lines).toEqual({
      renderer: 'rendering with: http://127.0.0.1:3001 (preset nextjs)',
      ready: `ISR ready on ${url}  try: curl -i ${url}/`,
    });
  });
});
