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

  it('listImages lists the image catalogue, to the end with paginate, each image saying whether it runs', async () => {
    const images = [];
    for await (const image of paginate(contractClient(), '/images')) images.push(image);
    expect(images.length).toBeGreaterThan(0);
    // One deployment, one driver: every image speaks of the same one.
    expect(new Set(images.map((image) => image.driver)).size).toBe(1);
    for (const image of images) expect(typeof image.available).toBe('boolean');
    // The computers the suites make use an image that runs here.
    const runs = images.find((image) => image.available);
    expect(runs).toBeDefined();
    fx.image = runs!.name;
  });
}
