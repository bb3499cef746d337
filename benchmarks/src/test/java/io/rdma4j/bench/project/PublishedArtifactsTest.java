package io.rdma4j.bench.project;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a release publishes stays consistent as modules come and go: the BOM lists each library jar, names cannot clash. */
class PublishedArtifactsTest {


    private static Document pom(Path file) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    }

    /** The text of the direct child {@code name} of {@code parent}, or {@code null}. */
    private static String child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e.getTextContent().strip();
            }
        }
        return null;
    }

    private static List<String> texts(Document doc, String tag) {
        List<String> out = new ArrayList<>();
        NodeList nodes = doc.getElementsByTagName(tag);
        for (int i = 0; i < nodes.getLength(); i++) {
            out.add(nodes.item(i).getTextContent().strip());
        }
        return out;
    }

    /** artifactIds of the reactor's jar modules that are published (no maven.deploy.skip). */
    private static TreeSet<String> publishedJars() throws Exception {
        TreeSet<String> published = new TreeSet<>();
        for (String module : texts(pom(Repository.root().resolve("pom.xml")), "module")) {
            Document doc = pom(Repository.root().resolve(module).resolve("pom.xml"));
            Element project = doc.getDocumentElement();
            String packaging = child(project, "packaging");
            boolean skipped = texts(doc, "maven.deploy.skip").contains("true");
            if ((packaging == null || packaging.equals("jar")) && !skipped) {
                published.add(child(project, "artifactId"));
            }
        }
        return published;
    }

    @Test
    void bom_managesEveryPublishedJar_atTheProjectVersion() throws Exception {
        Document bom = pom(Repository.root().resolve("bom/pom.xml"));
        Element project = bom.getDocumentElement();
        TreeSet<String> managed = new TreeSet<>();
        NodeList deps = bom.getElementsByTagName("dependency");
        for (int i = 0; i < deps.getLength(); i++) {
            Element d = (Element) deps.item(i);
            assertEquals("${project.version}", child(d, "version"), child(d, "artifactId"));
            managed.add(child(d, "artifactId"));
        }

        assertEquals(publishedJars(), managed);
        String parentVersion = child(pom(Repository.root().resolve("pom.xml")).getDocumentElement(), "version");
        assertEquals(parentVersion, child(project, "version"), "the BOM's version follows the parent's");
        assertEquals(null, child(project, "parent"), "a BOM with a parent hands its importers the parent's dependencyManagement too");
    }

    @Test
    void publishedArtifactIds_startWithRdma4j() throws Exception {
        TreeSet<String> published = publishedJars();
        assertTrue(published.contains("rdma4j-api"), published.toString());
        assertTrue(published.stream().allMatch(a -> a.startsWith("rdma4j-")), published.toString());
        assertTrue(!published.contains("rdma4j-benchmarks"), "the benchmarks are not published");
    }
}
