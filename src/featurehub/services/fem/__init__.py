"""The feature manager (rs-fem): acceptance of creation and patch requests, their processing
by workers, products and their versions, data models, storages, outbox and sessions."""
