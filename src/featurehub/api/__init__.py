"""HTTP handlers, one package per microservice; each handler is named after its operationId."""
