/**
 * The local CloudFront runs the distribution the deployed stack synthesizes: its edge (built by
 * `createPageEdge` alone, in `local/cloudfront/synth.ts`) reads back exactly as the edge of the
 * whole `IsrStack` template does, for the demo and for a Next.js site with an upstream.
 */
import { describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import type { IsrServiceProps } from '../../lib/isr-service-props.js';
import { IsrStack } from '../../lib/isr-stack.js';
import { edgeConfigOf, type EdgeConfig } from '../../local/cloudfront/config.js';
import { edgePropsOf, synthesizeEdge } from '../../local/cloudfront/synth.js';
import { cdkJsonContext } from './stack-fixture.js';

/** The edge of the whole stack's template, as `cdk synth` writes it. */
function stackEdge(props: IsrServiceProps): EdgeConfig {
  const app = new App({ context: cdkJsonContext(), builtinCloudFormationValidation: false });
  const stack = new IsrStack(app, 'IsrEdgeTest', { service: props });
  return edgeConfigOf(app.synth().getStackByName(stack.stackName).template);
}

/** Without what names it (the stack's name in policy names, construct paths in origin ids). */
function comparable(config: EdgeConfig) {
  const kindOf = (id: string) => config.origins[id]?.kind ?? id;
  return {
    ...config,
    behaviours: config.behaviours.map((behaviour) => ({
      ...behaviour,
      originId: kindOf(behaviour.originId),
      cachePolicy: { ...behaviour.cachePolicy, name: '' },
      originRequestPolicy: behaviour.originRequestPolicy && {
        ...behaviour.originRequestPolicy,
        name: '',
      },
    })),
    origins: Object.values(config.origins)
      .map((origin) => ({ ...origin, id: origin.kind }))
      .sort((a, b) => a.kind.localeCompare(b.kind)),
  };
}

describe('the local CloudFront is the synthesized distribution', () => {
  it.each([
    ['the demo', {}],
    [
      'a Next.js site with an https upstream',
      {
        preset: 'nextjs',
        renderOriginUrl: 'https://upstream.isr.localhost/app',
        bypassPaths: ['/api/**'],
      },
    ],
  ] as const)('%s: the edge npm start runs is the whole stack’s', async (_name, props) => {
    const local = await synthesizeEdge(edgePropsOf(props));
    expect(comparable(local)).toEqual(comparable(stackEdge(props)));
  });

  it('a plain-http upstream (npm start) synthesizes as its https stand-in, so the edge routes to it', () => {
    expect(edgePropsOf({ renderOriginUrl: 'http://localhost:8080/app' }).renderOriginUrl).toBe(
      'https://upstream.isr.localhost/app',
    );
  });
});
