"""Serving shapes (gateway and direct), published contracts, the command line and bootstrap."""

from __future__ import annotations

import pytest

from featurehub.app import create_app
from featurehub.cli import main
from featurehub.middleware import RenderedContractAPI
from featurehub.settings import Settings


@pytest.fixture
def fresh_settings(tmp_path) -> Settings:
    return Settings.from_env(environ={}, database_url=f"sqlite:///{tmp_path / 'fh.db'}",
                             embedded_worker=False, load_toponyms=False)


class TestGateway:
    @pytest.mark.parametrize("microservice", ["rs-access", "rs-authentication"])
    def test_contract_and_swagger_ui_are_published(self, client, microservice):
        contract = client.get(f"/{microservice}/api/v1/openapi.json")
        assert contract.status_code == 200
        assert contract.json()["info"]["title"] == microservice
        assert client.get(f"/{microservice}/api/v1/ui/").status_code == 200

    def test_contracts_are_rendered_once(self, client, monkeypatch):
        renders = []
        render = RenderedContractAPI._spec_for_prefix
        monkeypatch.setattr(RenderedContractAPI, "_spec_for_prefix",
                            lambda api, request: renders.append(1) or render(api, request))
        for path in ("openapi.json", "openapi.yaml"):
            answers = [client.get(f"/rs-admin/api/v1/{path}") for _ in range(3)]
            assert {answer.status_code for answer in answers} == {200}
            assert len({answer.content for answer in answers}) == 1
        assert answers[0].headers["content-type"].startswith("text/yaml")
        assert "title: rs-admin" in answers[0].text
        assert len(renders) <= 2  # once per document at most (earlier tests may have asked)

    def test_undocumented_method_is_405_with_allow(self, client):
        response = client.patch("/rs-access/api/v1/themes/1")
        assert response.status_code == 405
        assert response.headers["allow"] == "DELETE, GET, PUT"
        assert response.json() == {"type": "about:blank", "title": "Method Not Allowed",
                                   "status": 405, "detail": "Allowed methods: DELETE, GET, PUT."}


class TestDirect:
    def test_one_microservice_at_the_root(self, fresh_settings):
        app = create_app(fresh_settings.with_(direct="rs-access"))
        client = app.test_client()
        response = client.get("/themes", params={"scope": "demo"})
        assert response.status_code == 200
        assert client.get("/rs-access/api/v1/themes", params={"scope": "demo"}).status_code == 404
        app.app.extensions["featurehub"].stop()


class TestBootstrap:
    def test_generated_password_is_printed_once(self, fresh_settings, capsys):
        create_app(fresh_settings).app.extensions["featurehub"].stop()
        first = capsys.readouterr().out
        assert "admin@featurehub.local password (shown once):" in first
        create_app(fresh_settings).app.extensions["featurehub"].stop()
        assert "password" not in capsys.readouterr().out


class TestCommandLine:
    def test_project_create_list_and_client(self, fresh_settings, monkeypatch, capsys):
        monkeypatch.setenv("FEATUREHUB_DATABASE_URL", fresh_settings.database_url)
        monkeypatch.setenv("FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD", "pw")
        monkeypatch.setenv("FEATUREHUB_LOAD_TOPONYMS", "false")
        assert main(["project", "create", "space"]) == 0
        assert main(["project", "create", "space"]) == 2
        assert "Project 'space' already exists." in capsys.readouterr().err
        assert main(["project", "list"]) == 0
        assert capsys.readouterr().out.split() == ["demo", "space"]
        assert main(["client", "create", "--project", "space", "--client-id", "robot"]) == 0
        assert "client_id=robot" in capsys.readouterr().out
        assert main(["client", "create", "--project", "nowhere"]) == 2

    def test_help_reads_well(self, capsys):
        with pytest.raises(SystemExit):
            main(["--help"])
        out = capsys.readouterr().out
        for command in ("serve", "db", "project", "client"):
            assert command in out
