import { paginate, unwrap } from '@svc/client';
import { expect, it } from 'vitest';
import { fx } from '../support/fixtures.js';
import { contractClient } from '../support/harness.js';

export function catalogSuite(): void {
  it('listSizes lists the size catalogue', async () => {
    const { sizes } = await unwrap(contractClient().GET('/sizes'));
    expect(sizes.length).toBeGreaterThan(0);
    fx.size = sizes[0]!.name;
  });

  it('listImages lists the image catalogue, to the end with paginate', async () => {
    const images = [];
    for await (const image of paginate(contractClient(), '/images')) images.push(image);
    expect(images.length).toBeGreaterThan(0);
    fx.image = images[0]!.name;
  });
}
