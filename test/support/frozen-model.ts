import { deriveModel, type Overlay, type ResourceModel } from '../../src/model/resource-model.ts';
import { frozenCatalog } from '../fixtures/frozen-model/catalog.ts';
import { frozenOverlay } from '../fixtures/frozen-model/overlay.ts';

export { frozenCatalog, frozenOverlay };

let model: ResourceModel | undefined;

/**
 * The model of a catalog and overlay frozen in test/fixtures/frozen-model/: what the tests that
 * hold exact generated SQL (or plant a table into a catalog) read, so that adding a resource to
 * the service edits none of them. `extra` entries are laid over the frozen overlay.
 */
export function frozenModel(extra?: Overlay): ResourceModel {
  if (extra) return deriveModel(frozenCatalog, { ...frozenOverlay, ...extra });
  model ??= deriveModel(frozenCatalog, frozenOverlay);
  return model;
}
